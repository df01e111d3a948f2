import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { DEMO_USERS } from '#local/seed';
import { startLocalService } from '#local/service';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { createLocalSigner } from '#shared/keys/local-signer';
import { issueAccessToken } from '#shared/oauth/access-token';
import { median } from './stats.ts';

// `npm run bench:shadow [-- <rounds>]`: the device shadow's end-to-end latency on the local service
// (DynamoDB Local, its stream read every 25 ms, the broker stand-in), `rounds` times each (default 30):
// - floor: the broker's own publish-to-deliver time (a device publishes on its own topic, subscribed);
// - command: from the `PUT /devices/{id}` sent to the device receiving its shadow's delta;
// - report: from the device's report published to the `device.updated` webhook received.
// Each as median and 90th percentile, and as a ratio of its median to the floor's. Local figures on
// one machine: no AWS latency, and the stream's polling dominates. Informational: no budget.

const rounds = Number(process.argv[2] ?? 30);
const [ALICE] = DEMO_USERS;
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)] ?? NaN;

let onHook: ((body: string) => void) | undefined;
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => void (body += chunk.toString()));
  req.on('end', () => {
    res.writeHead(204).end();
    onHook?.(body);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
const stateDir = mkdtempSync(join(tmpdir(), 'dus-bench-shadow-'));
const service = await startLocalService({ apiPort: 0, authPort: 0, stateDir, webhooks: { timeScale: 1e-3 }, iot: true });
let client: MqttClient | undefined;
try {
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
  const table = { doc, table: service.tableName };
  const device = { ...ALICE.devices[0], id: crypto.randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date()), connected: false };
  await createDeviceRepo(table).createDevice(ALICE.user.id, device);
  const clientId = `bench-shadow-${crypto.randomUUID()}`;
  await createClientRepo(table).createClient({
    clientId, secretHash: 'x', name: 'Shadow bench', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
    developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
  });
  await createGrantRepo(table).saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
  await createWebhookRepo(table).setUrl(clientId, hookUrl);
  const token = await issueAccessToken(createLocalSigner(service.signingKeyFile), {
    issuer: service.authUrl, audience: service.apiUrl, userId: ALICE.user.id, clientId: 'bench', scopes: ['write_device'],
  });

  const creds = await service.iot!.ca.issue(device.id);
  client = mqtt.connect(service.iot!.broker.url, { clientId: device.id, key: creds.keyPem, cert: creds.certPem, ca: service.iot!.ca.certPem, reconnectPeriod: 0 });
  await new Promise<void>((resolve, reject) => {
    client!.once('connect', () => resolve());
    client!.once('error', reject);
  });
  const root = `$aws/things/${device.id}/shadow`;
  let onMessage: ((topic: string, body: Record<string, any>) => void) | undefined;
  client.on('message', (topic, payload) => onMessage?.(topic, JSON.parse(payload.toString()) as Record<string, any>));
  await client.subscribeAsync([`${root}/update/delta`, `devices/${device.id}/echo`], { qos: 1 });
  const timed = (start: () => unknown, done: (resolve: () => void) => void) => new Promise<number>((resolve) => {
    const at = performance.now();
    done(() => resolve(performance.now() - at));
    void start();
  });

  const floor: number[] = [];
  const command: number[] = [];
  const report: number[] = [];
  /** The command the device last received: it reports it back, as firmware does once it has applied it. */
  let applied = 0;
  for (let i = 0; i < rounds; i++) {
    floor.push(await timed(() => client!.publishAsync(`devices/${device.id}/echo`, String(i), { qos: 1 }), (resolve) => {
      onMessage = (topic) => topic.endsWith('/echo') && resolve();
    }));
    const sound = i % 2 === 0;
    command.push(await timed(() => fetch(`${service.apiUrl}/devices/${device.id}`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sound }),
    }), (resolve) => {
      onMessage = (topic, body) => {
        if (!topic.endsWith('/delta') || body.state?.sound !== sound) return;
        applied = Number(body.state.command);
        resolve();
      };
    }));
    const version = `3.${i}.0`;
    report.push(await timed(() => client!.publishAsync(`${root}/update`, JSON.stringify({ state: { reported: { sound, version, command: applied } } }), { qos: 1 }), (resolve) => {
      onHook = (body) => body.includes('device.updated') && body.includes(`"${version}"`) && resolve();
    }));
  }
  const row = (name: string, values: number[]) => {
    const m = median(values);
    console.log(`${name.padEnd(34)} median ${m.toFixed(1).padStart(7)} ms   p90 ${p90(values).toFixed(1).padStart(7)} ms   ÷ floor ${(m / median(floor)).toFixed(1).padStart(6)}`);
  };
  console.log(`Device shadow, end to end on the local service (${rounds} rounds each):`);
  row('floor: broker publish → deliver', floor);
  row('command: PUT → device\'s delta', command);
  row('report: device → device.updated', report);
  doc.destroy();
} finally {
  await client?.endAsync(true);
  await service.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  rmSync(stateDir, { recursive: true, force: true });
}
