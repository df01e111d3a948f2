import { randomUUID } from 'node:crypto';
import { ENV, optionalEnv } from '#shared/config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { formatTimestamp } from '#shared/domain/time';
import { fail, parseCommandLine, usageError } from '#local/cli';
import { readServiceFacts } from '#local/service';

// `npm run admin -- <command> …`: operator tasks the public API does not offer (SPEC.md shows no
// operation that creates a device or changes `connected`), over the same data layer.
// Target: the running local service (.local/service.json), or AWS when TABLE_NAME is set
// (with the usual AWS credentials and region).
const usage = `Usage:
  npm run admin -- provision-device --owner <email> --name <text> --place <text> --reference <hex>
                   [--latitude <deg>] [--longitude <deg>] [--version <x.y.z>] [--id <uuid>]
  npm run admin -- set-connection --device <uuid> --connected <true|false>
Works on the running local service (npm start), or on a deployed table when TABLE_NAME and the
usual AWS credentials and region are set.`;
const tool = { name: 'admin', usage };
const COMMANDS = ['provision-device', 'set-connection'];

const { positionals, values } = parseCommandLine(tool, {
  allowPositionals: true,
  options: {
    owner: { type: 'string' }, name: { type: 'string' }, place: { type: 'string' }, reference: { type: 'string' },
    latitude: { type: 'string', default: '0' }, longitude: { type: 'string', default: '0' }, version: { type: 'string', default: '1.0.0' },
    id: { type: 'string' }, device: { type: 'string' }, connected: { type: 'string' },
  },
});

const command = positionals[0];
if (command === undefined) fail(usage);
if (!COMMANDS.includes(command)) usageError(tool, `Unknown command '${command}'`);
if (positionals.length > 1) usageError(tool, `Unexpected argument '${positionals[1]}'`);

function target(): { table: string; endpoint?: string } {
  const table = optionalEnv(ENV.tableName);
  if (table) return { table };
  try {
    const { tableName, dynamodbEndpoint } = readServiceFacts();
    return { table: tableName, endpoint: dynamodbEndpoint };
  } catch (error) {
    return fail(`${(error as Error).message} Or set TABLE_NAME to work on a deployed table.`);
  }
}

const { table, endpoint } = target();
const doc = createDocumentClient({ endpoint });
const devices = createDeviceRepo({ doc, table });
const now = formatTimestamp(new Date());

switch (command) {
  case 'provision-device': {
    const { owner, name, place, reference } = values;
    if (!owner || !name || !place || !reference || !/^[0-9a-f]+$/i.test(reference)) fail(usage);
    const record = await createUserRepo({ doc, table }).findUserByEmail(owner);
    if (!record) fail(`No account for ${owner}.`);
    const id = values.id ?? randomUUID();
    await devices.createDevice(record.user.id, {
      id, name, place, reference, version: values.version!, last_connection: now, active: false, connected: false, sound: true,
      latitude: Number(values.latitude), longitude: Number(values.longitude),
    });
    console.log(JSON.stringify({ provisioned: id, owner: record.user.email }));
    break;
  }
  case 'set-connection': {
    if (!values.device || !['true', 'false'].includes(values.connected ?? '')) fail(usage);
    const owner = await devices.findDeviceOwner(values.device.toLowerCase());
    if (!owner) fail(`No device ${values.device}.`);
    await devices.setConnection(owner, values.device.toLowerCase(), values.connected === 'true', now);
    console.log(JSON.stringify({ device: values.device, connected: values.connected === 'true' }));
    break;
  }
  default:
    fail(usage);
}
doc.destroy();
