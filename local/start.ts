import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, LOCAL_ENV, optionalEnv, portEnv } from '#shared/config';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { startExampleApp } from '#local/example-app';
import { subscribeExampleApp } from '#local/example-webhook';
import { connectDevice, seededFirmwareState } from '#local/demo-device';
import { runFirmware } from '#local/device-firmware';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { batchWrites } from '#local/output';
import { localStateDir, serviceFacts, startLocalService } from '#local/service';

// `npm start`: the whole service on this machine. Ctrl-C stops everything, Java child included.
// A port that cannot be opened ends it with one line naming the port, its use and its variable,
// after it has stopped what it started.
batchWrites(process.stdout, { before: [process.stderr] });
const stateDir = localStateDir();
const dataDir = optionalEnv(LOCAL_ENV.dataDir);

/** The three ports a developer may need to move, each with the variable that moves it. */
const hosts = (() => {
  try {
    const list = [
      { what: 'the resource API', variable: LOCAL_ENV.apiPort, port: portEnv(LOCAL_ENV.apiPort, 3000) },
      { what: 'the authorization server', variable: LOCAL_ENV.authPort, port: portEnv(LOCAL_ENV.authPort, 3001) },
      { what: 'the example app', variable: LOCAL_ENV.examplePort, port: portEnv(LOCAL_ENV.examplePort, 8080) },
    ];
    for (const [i, host] of list.entries()) {
      const other = list.slice(i + 1).find((h) => h.port !== 0 && h.port === host.port);
      if (other) throw new ConfigError(`${host.variable} and ${other.variable} are both ${host.port}: give each its own port.`);
    }
    return list;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return process.exit(2);
  }
})();
const [api, auth, example] = hosts as [(typeof hosts)[number], (typeof hosts)[number], (typeof hosts)[number]];

/** The one line for a port that cannot be opened, or undefined for any other error. */
function portProblem(error: unknown): string | undefined {
  const { code, port } = error as NodeJS.ErrnoException & { port?: number };
  const host = hosts.find((h) => h.port === port);
  if (!host) return undefined;
  const move = `set ${host.variable} to a free port (${host.variable}=0 picks one)`;
  if (code === 'EADDRINUSE') return `Port ${port} (${host.what}) is already in use: ${move}.`;
  if (code === 'EACCES') return `Port ${port} (${host.what}) needs privileges this process lacks: ${move}.`;
  return undefined;
}

/** Ends `npm start` on an error after stopping what was started: one line for a port, the error otherwise. */
async function abort(error: unknown, stop: () => Promise<void>): Promise<never> {
  await stop();
  const problem = portProblem(error);
  console.error(problem ?? error);
  return process.exit(1);
}

// A signal while starting exits at once (DynamoDB Local's exit hook kills the Java child); once
// running, it stops the hosts, then DynamoDB Local.
let stopRunning: (() => Promise<void>) | undefined;
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    if (!stopRunning) process.exit(130);
    console.log('\nStopping…');
    stopRunning().then(() => process.exit(0), (error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
}

/** WEBHOOK_TIME_SCALE: the local webhook queue's timeouts multiplied (1, the real retry schedule, by default). */
const webhookTimeScale = (() => {
  const value = optionalEnv(LOCAL_ENV.webhookTimeScale);
  if (value === undefined) return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) {
    console.error(`${LOCAL_ENV.webhookTimeScale} must be a number above 0 and at most 1 (1: the real retry schedule), not '${value}'.`);
    return process.exit(2);
  }
  return scale;
})();

/**
 * The longest pause of an idle stream reader here, ms. Left alone, the service should cost nothing
 * worth a laptop's fan: each read of the stream costs DynamoDB Local about 10 ms of CPU while its
 * code is not yet compiled, so two readers at one read each 2 s used about 1.2 % of a core, more than
 * the rest of the idle service together (bench/RESULTS.md, "Ours as users run it"). The service's own writes (every
 * request, every device message) bring the readers back to Lambda's pace at once; this bounds only
 * how late a write of another process (`npm run admin`) reaches the webhooks and the devices.
 */
const STREAM_IDLE_POLL_MS = 10_000;

const service = await startLocalService({
  apiPort: api.port, authPort: auth.port, dataDir, stateDir, webhooks: { timeScale: webhookTimeScale }, iot: true, streamIdlePollMs: STREAM_IDLE_POLL_MS,
})
  // startLocalService has already stopped what it started (DynamoDB Local included) when it throws.
  .catch((error: unknown) => abort(error, async () => undefined));

// The example third-party application, signed up as the demo client (redirect URI on port 8080).
const exampleApp = await startExampleApp({
  port: example.port,
  authUrl: service.authUrl,
  apiUrl: service.apiUrl,
  clientId: DEMO_CLIENT.clientId,
  clientSecret: DEMO_CLIENT.clientSecret,
}).catch((error: unknown) => abort(error, service.stop));
const redirectUri = `${exampleApp.url}/callback`;
if (!(DEMO_CLIENT.redirectUris as readonly string[]).includes(redirectUri)) {
  // Another port: register its callback too, as a developer would in the developer console.
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
  const clients = createClientRepo({ doc, table: service.tableName });
  const registered = await clients.getClient(DEMO_CLIENT.clientId);
  if (registered && !registered.redirectUris.includes(redirectUri)) {
    await clients.updateClient(registered.developerId, registered.clientId, { redirectUris: [...registered.redirectUris, redirectUri] });
  }
  doc.destroy();
}

// Its webhook: the service pushes the demo users' device changes to it, and its device page shows them live.
await subscribeExampleApp(exampleApp, { dynamodbEndpoint: service.dynamodbEndpoint, tableName: service.tableName, clientId: DEMO_CLIENT.clientId })
  .catch((error: unknown) => abort(error, () => exampleApp.stop().then(() => service.stop())));

// A demo device connected as its firmware would connect to AWS IoT Core: Alice's first device shows
// connected, obeys a PUT of `active` or `sound` from its shadow, and reports it back.
const demoDeviceId = DEMO_USERS[0].devices[0].id;
const demoDevice = connectDevice({ url: service.iot!.broker.url, credentialsDir: service.iot!.credentialsDir }, demoDeviceId);
await new Promise<void>((resolve, reject) => {
  demoDevice.once('connect', () => resolve());
  demoDevice.once('error', reject);
}).then(() => runFirmware(demoDevice, demoDeviceId, seededFirmwareState(demoDeviceId), (line) => console.log(line)))
  .catch((error: unknown) => abort(error, () => demoDevice.endAsync(true).then(() => exampleApp.stop()).then(() => service.stop())));

const served = serviceFacts(service, redirectUri);
const facts = {
  ...served,
  iot: { ...served.iot!, connectedDevice: demoDeviceId },
  persistence: dataDir ? `folder ${dataDir}` : 'in memory',
  exampleAppUrl: exampleApp.url,
};
mkdirSync(stateDir, { recursive: true });
writeFileSync(join(stateDir, 'service.json'), `${JSON.stringify(facts, null, 2)}\n`);

console.log(`
Device and User Service is running (data ${facts.persistence}).
  Resource API          ${service.apiUrl}   (also under ${service.apiUrl}/api)
  API reference         ${service.apiUrl}/docs
  Authorization server  ${service.authUrl}   (discovery: ${service.authUrl}/.well-known/openid-configuration)
  DynamoDB Local        ${service.dynamodbEndpoint}, table ${service.tableName} (its stream feeds the webhooks${webhookTimeScale === 1 ? '' : `, retries ×${webhookTimeScale}`})
  Example app           ${exampleApp.url} — sign in as ${facts.users[0]!.email} / ${facts.users[0]!.password}
                        (webhook ${exampleApp.webhookUrl}: its device page updates live)
  IoT Core stand-in     ${service.iot!.broker.url} — demo device ${demoDeviceId} (Alice's ${DEMO_USERS[0].devices[0].name}) is connected
                        and obeys PUTs of active and sound; connect another: npm run device (or npm run device -- <device id>)
Demo accounts:
${facts.users.map((u) => `  ${u.email.padEnd(20)} password ${u.password.padEnd(22)} ${u.devices.length} devices`).join('\n')}
Try:  TOKEN=$(npm run -s token -- --user alice@example.com --scope "read_user read_device write_device")
      curl -H "Authorization: Bearer $TOKEN" ${service.apiUrl}/devices
The same facts are in ${join(stateDir, 'service.json')}. Press Ctrl-C to stop.
`);
stopRunning = () => demoDevice.endAsync().then(() => exampleApp.stop()).then(() => service.stop());
