import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV, MAIL_ENV, optionalEnv, WEBHOOK_ENV } from '#shared/config';
import type { MailSettings } from '#shared/email/create-mailer';
import { formatTimestamp } from '#shared/domain/time';
import { fail, parseCommandLine, usageError } from '#local/cli';
import { readServiceFacts, useServiceEnvironment } from '#local/service';
import { checkWebhookUrl } from '#shared/webhooks/url-safety';
import { describeRotation, rotateSigningKeys } from '#shared/keys/rotation';
import { localEndpointConfig } from '#shared/aws/client-config';
import { replayStreamFailures } from '#local/stream-replay';
import { IoTClient } from '@aws-sdk/client-iot';
import { iotDeviceRegistry } from '#local/device-registry';
import { allowFactorySerials, provisionDevice } from '#local/provision-device';

// `npm run admin -- <command> …`: operator tasks the public API does not offer (no operation
// creates a device or changes `connected`: docs/api.md#what-the-api-does-not-offer), over the same
// data layer and services, from the composition root (shared/runtime.ts) as the functions have them.
// Target: the running local service (.local/service.json), or AWS when TABLE_NAME is set
// (with the usual AWS credentials and region).
const usage = `Usage:
  npm run admin -- provision-device --name <text> --place <text> --reference <hex>
                   [--latitude <deg>] [--longitude <deg>] [--version <x.y.z>] [--id <uuid>] [--out <dir>] [--policy <name>]
                   (a device that belongs to nobody: its IoT thing, certificate and key files, and its claim code, printed
                   once for its label; its owner adds it on the account's devices page. --id of a device freed by its owner
                   resets it: a new certificate and claim code. Locally the files go to the service's iot folder; in AWS to
                   --out (default .) and --policy is the stack's DevicePolicyName output)
  npm run admin -- allow-serials --serials <SN-1,SN-2,…> --reference <hex> [--out <file>]
                   (a factory batch for fleet provisioning by claim: a device that belongs to nobody per serial, its claim
                   code, the serial on the pre-provisioning hook's allow-list; the label sheet as CSV, to --out or stdout)
  npm run admin -- provision-device --owner <email> --name <text> --place <text> --reference <hex> [...]
                   (a device provisioned straight to an account, without an IoT identity: seed data)
  npm run admin -- set-connection --device <uuid> --connected <true|false>
  npm run admin -- rotate-signing-key     (local service; in AWS invoke the stack's rotation function)
  npm run admin -- subscribe-webhook --client <client id> --url <https URL>
                   (prints the signing secret when it creates the subscription; locally http://localhost… is accepted)
  npm run admin -- export-user --email <address> [--out <file>]
                   (everything stored about the user, as the account page's "Download my data"; to stdout without --out)
  npm run admin -- delete-user --email <address>    (deletes the account as its owner can, without the password)
  npm run admin -- delete-user --pending            (finishes every deletion that started and did not finish)
                   (in AWS, delete-user also needs AUTH_ISSUER and MAIL_FROM, for the farewell e-mail)
  npm run admin -- reset-factors --email <email> --confirm
                   (a user who lost every second factor, checked by you outside the service: removes the
                   authenticator app, recovery codes and passkeys, signs the account out everywhere, e-mails the user;
                   in AWS also set MAIL_FROM and AUTH_ISSUER as the stack's functions have them)
  npm run admin -- replay-stream-failures [--forget-expired]
                   (the table changes the webhook fan-out gave up on, read again from the stream and fanned out;
                   in AWS also set STREAM_FAILURES_QUEUE_URL and WEBHOOK_QUEUE_URL: the stack's outputs)
Works on the running local service (npm start), or on a deployed table when TABLE_NAME and the
usual AWS credentials and region are set.`;
const tool = { name: 'admin', usage };
const COMMANDS = [
  'provision-device', 'allow-serials', 'set-connection', 'rotate-signing-key', 'subscribe-webhook', 'export-user', 'delete-user', 'reset-factors', 'replay-stream-failures',
];

const { positionals, values } = parseCommandLine(tool, {
  allowPositionals: true,
  options: {
    owner: { type: 'string' }, name: { type: 'string' }, place: { type: 'string' }, reference: { type: 'string' },
    latitude: { type: 'string', default: '0' }, longitude: { type: 'string', default: '0' }, version: { type: 'string', default: '1.0.0' },
    id: { type: 'string' }, device: { type: 'string' }, connected: { type: 'string' }, client: { type: 'string' }, url: { type: 'string' },
    email: { type: 'string' }, out: { type: 'string' }, pending: { type: 'boolean' }, confirm: { type: 'boolean', default: false },
    'forget-expired': { type: 'boolean', default: false }, policy: { type: 'string' }, serials: { type: 'string' },
  },
});

const command = positionals[0];
if (command === undefined) fail(usage);
if (!COMMANDS.includes(command)) usageError(tool, `Unknown command '${command}'`);
if (positionals.length > 1) usageError(tool, `Unexpected argument '${positionals[1]}'`);

/** A queue's URL, and the local stand-in's endpoint when it is one. */
type QueueTarget = { queueUrl: string; endpoint?: string };

function target(): {
  table: string; endpoint?: string; signingKeyFile?: string; issuer?: string; mail?: MailSettings; deliveries?: QueueTarget; streamFailures?: QueueTarget;
} {
  const table = optionalEnv(ENV.tableName);
  if (table) {
    const sender = optionalEnv(MAIL_ENV.sender);
    const [deliveries, streamFailures] = [optionalEnv(WEBHOOK_ENV.queueUrl), optionalEnv(WEBHOOK_ENV.streamFailuresQueueUrl)];
    return {
      table, issuer: optionalEnv(ENV.issuer), ...(sender ? { mail: { sender, configurationSet: optionalEnv(MAIL_ENV.configurationSet) } } : {}),
      ...(deliveries ? { deliveries: { queueUrl: deliveries } } : {}), ...(streamFailures ? { streamFailures: { queueUrl: streamFailures } } : {}),
    };
  }
  try {
    const facts = readServiceFacts();
    // The local service's handlers' environment, which the composition root reads (in AWS, the variables set above).
    useServiceEnvironment(facts);
    const { tableName, dynamodbEndpoint, signingKeyFile, authUrl, outboxDir, webhookQueue, streamFailures } = facts;
    return { table: tableName, endpoint: dynamodbEndpoint, signingKeyFile, issuer: authUrl, mail: { outboxDir }, deliveries: webhookQueue, streamFailures };
  } catch (error) {
    return fail(`${(error as Error).message} Or set TABLE_NAME to work on a deployed table.`);
  }
}

const { endpoint, signingKeyFile, issuer, mail, deliveries, streamFailures } = target();
// Loaded once the environment is set: it builds its DynamoDB client as it loads.
const {
  appsInUse, claims, clients, deleteAccount, devices, doc, erasure, exportAccount, fanOut, resetFactorsByOperator, rotationDeps, serials, users, webhooks,
} = await import('#shared/runtime');
const now = formatTimestamp(new Date());

switch (command) {
  case 'provision-device': {
    if (!values.owner) {
      await provisionUnclaimed();
      break;
    }
    const { owner, name, place, reference } = values;
    if (!owner || !name || !place || !reference || !/^[0-9a-f]+$/i.test(reference)) fail(usage);
    const record = await users.findUserByEmail(owner);
    if (!record) fail(`No account for ${owner}.`);
    const id = values.id ?? randomUUID();
    await devices.createDevice(record.user.id, {
      id, name, place, reference, version: values.version!, last_connection: now, active: false, connected: false, sound: true,
      latitude: Number(values.latitude), longitude: Number(values.longitude),
    });
    console.log(JSON.stringify({ provisioned: id, owner: record.user.email }));
    break;
  }
  case 'allow-serials': {
    try {
      const sheet = await allowFactorySerials(
        { claims, serials }, values.serials, { reference: values.reference, version: values.version!, now },
      );
      if (values.out) writeFileSync(values.out, sheet, { mode: 0o600 });
      else process.stdout.write(sheet);
    } catch (error) {
      fail((error as Error).message);
    }
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
  case 'rotate-signing-key': {
    // One step of shared/keys/rotation.ts: the next key is published now and signs two hours
    // later; the old one is retired an hour after that and deleted by the next step.
    if (!signingKeyFile) {
      fail('In AWS the rotation function holds the KMS permissions: aws lambda invoke --function-name <RotateSigningKeyFunctionName output> '
        + '--cli-binary-format raw-in-base64-out --payload \'{"mode":"now"}\' /dev/stdout');
    }
    const outcome = await rotateSigningKeys(rotationDeps(), { mode: 'now' });
    console.log(describeRotation(outcome).join('\n'));
    break;
  }
  case 'subscribe-webhook': {
    if (!values.client || !values.url) fail(usage);
    if (!(await clients.getClient(values.client))) fail(`No application ${values.client}.`);
    // Plain http to this machine only for the local service, as the developer console allows it.
    const checked = await checkWebhookUrl(values.url, { allowLocalHttp: endpoint !== undefined });
    if (!checked.ok) fail(checked.reason);
    const { created, secret } = await webhooks.setUrl(values.client, checked.url.href);
    console.log(JSON.stringify({ client: values.client, url: checked.url.href, created, ...(secret ? { secret } : {}) }));
    break;
  }
  case 'export-user': {
    if (!values.email) fail(usage);
    const record = await users.findUserByEmail(values.email);
    if (!record) fail(`No account for ${values.email}.`);
    const document = await exportAccount(record.user, undefined);
    const text = `${JSON.stringify(document, null, 2)}\n`;
    if (values.out) {
      writeFileSync(values.out, text, { mode: 0o600 });
      console.log(JSON.stringify({ exported: record.user.id, file: values.out }));
    } else {
      process.stdout.write(text);
    }
    break;
  }
  case 'delete-user': {
    if (Boolean(values.email) === Boolean(values.pending)) fail(usage);
    if (!issuer || !mail) fail('delete-user sends the farewell e-mail: set AUTH_ISSUER and MAIL_FROM (and MAIL_CONFIGURATION_SET) with TABLE_NAME.');
    if (values.pending) {
      const pending = await erasure.pendingDeletions();
      for (const userId of pending) await deleteAccount(userId);
      console.log(JSON.stringify({ finished: pending }));
      break;
    }
    const record = await users.findUserByEmail(values.email!);
    if (!record) fail(`No account for ${values.email} (a deletion that stopped after freeing the address is finished by delete-user --pending).`);
    const inUse = record.deleting ? [] : await appsInUse(record.user.id);
    if (inUse.length > 0) {
      fail(`Other people use applications ${values.email} develops; delete them first (their users lose access): ${inUse.map((a) => `${a.client.clientId} (${a.client.name}, ${a.users} users)`).join(', ')}.`);
    }
    await deleteAccount(record.user.id);
    console.log(JSON.stringify({ deleted: record.user.id, email: record.user.email }));
    break;
  }
  case 'reset-factors': {
    if (!values.email) fail(usage);
    if (!values.confirm) {
      fail(`This removes every second factor of ${values.email} and signs it out everywhere: check who asks first, then run it again with --confirm.`);
    }
    if (!issuer || !mail) fail('reset-factors e-mails the owner: set AUTH_ISSUER and MAIL_FROM (and MAIL_CONFIGURATION_SET) with TABLE_NAME.');
    const reset = await resetFactorsByOperator(values.email);
    if (!reset) fail(`No account for ${values.email}.`);
    console.log(JSON.stringify({ factorsReset: values.email, passkeysRemoved: reset.passkeysRemoved, sessionsEnded: reset.sessionsEnded, mailed: true }));
    break;
  }
  case 'replay-stream-failures': {
    if (!deliveries || !streamFailures) {
      fail('replay-stream-failures reads the stream-failures queue and sends to the delivery queue: set STREAM_FAILURES_QUEUE_URL and WEBHOOK_QUEUE_URL '
        + '(the stack\'s outputs) with TABLE_NAME, or run the local service with its webhook pipeline.');
    }
    const streams = new DynamoDBStreamsClient(localEndpointConfig(endpoint));
    const sqs = new SQSClient(localEndpointConfig(streamFailures.endpoint));
    const report = await replayStreamFailures({ streams, sqs, failuresQueueUrl: streamFailures.queueUrl, forgetExpired: values['forget-expired'], fanOut });
    streams.destroy();
    sqs.destroy();
    console.log(JSON.stringify(report));
    // Something still waits in the queue: the operator's attention (and a shell's), not a success.
    if (report.refused.length + report.failed.length + report.expired.filter((e) => !e.forgotten).length > 0) process.exitCode = 1;
    break;
  }
  default:
    fail(usage);
}
doc.destroy();

/** provision-device without an owner (local/provision-device.ts), on the local registry stand-in or on AWS IoT Core. */
async function provisionUnclaimed(): Promise<void> {
  const local = endpoint === undefined ? undefined : readServiceFacts().iot;
  if (endpoint !== undefined && !local?.registryUrl) fail('The local service runs without its IoT stand-in: restart it with npm start.');
  if (!local && !values.policy) fail('In AWS give --policy <the stack\'s DevicePolicyName output>.');
  const client = new IoTClient(local ? localEndpointConfig(local.registryUrl, 'us-east-1') : {});
  try {
    const provisioned = await provisionDevice({
      claims, devices, registry: iotDeviceRegistry(client, values.policy ?? 'local-device-policy'),
      outDir: local ? local.credentialsDir : values.out ?? '.',
    }, {
      id: values.id, name: values.name, place: values.place, reference: values.reference, version: values.version!,
      latitude: Number(values.latitude), longitude: Number(values.longitude), now,
    });
    console.log(JSON.stringify(provisioned));
  } catch (error) {
    fail((error as Error).message);
  } finally {
    client.destroy();
  }
}
