import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { currentInvocation } from '#local/invocation-context';
import { DEMO_USERS } from '#local/seed';
import { startLocalService } from '#local/service';
import { setClientHook } from '#shared/aws/client-config';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';

// `npm run bench:webhooks [-- <changes> <applications>]`: the webhook pipeline of the local service
// (DynamoDB Local's stream → fan-out-events → the SQS stand-in → deliver-webhooks → a receiver on
// 127.0.0.1), driven by `changes` device updates (default 200) of a user who granted `applications`
// subscribed applications (default 3). Prints the events delivered per second end to end, and per
// delivered event: the DynamoDB requests and the milliseconds of Lambda time (handler time of both
// functions, summed) it cost. Local figures: DynamoDB Local and one process, not AWS latency.
// Writes the figures into the `webhooks` section of bench-results.json (bench/RESULTS.md), which
// `npm run cost -- --results bench-results.json` reads for the push scenario of docs/operations.md.

const changes = Number(process.argv[2] ?? 200);
const applications = Number(process.argv[3] ?? 3);
const [ALICE] = DEMO_USERS;

const requests = new Map<string, number>();
const sqsRequests = new Map<string, number>();
const handlerMs = new Map<string, number>();
const invocations = new Map<string, number>();
setClientHook((client) => {
  (client as { middlewareStack: { add: (mw: unknown, options: unknown) => void } }).middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>, context: { clientName?: string }) => async (args: unknown) => {
      const by = currentInvocation();
      if (by && context.clientName === 'DynamoDBClient') requests.set(by.fn, (requests.get(by.fn) ?? 0) + 1);
      if (by && context.clientName === 'SQSClient') sqsRequests.set(by.fn, (sqsRequests.get(by.fn) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'bench-count-requests' },
  );
});

let delivered = 0;
let lastAt = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    delivered += 1;
    lastAt = performance.now();
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
const stateDir = mkdtempSync(join(tmpdir(), 'dus-bench-webhooks-'));
const service = await startLocalService({
  apiPort: 0, authPort: 0, stateDir,
  webhooks: {
    timeScale: 1e-3,
    observe: (fn, ms) => {
      handlerMs.set(fn, (handlerMs.get(fn) ?? 0) + ms);
      invocations.set(fn, (invocations.get(fn) ?? 0) + 1);
    },
  },
});
const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint, limits: { requestTimeoutMs: 10_000 } });
try {
  const table = { doc, table: service.tableName };
  for (let i = 0; i < applications; i++) {
    const clientId = `bench-app-${i}`;
    await createClientRepo(table).createClient({
      clientId, secretHash: 'x', name: `Bench ${i}`, description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await createGrantRepo(table).saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    await createWebhookRepo(table).setUrl(clientId, url);
  }
  const devices = createDeviceRepo(table);
  const warmUp = async () => {
    await devices.updateOwnedDevice(ALICE.user.id, ALICE.devices[0].id, { place: 'warm-up' });
    while (delivered < applications) await new Promise((r) => setTimeout(r, 20));
  };
  await warmUp();
  requests.clear();
  sqsRequests.clear();
  handlerMs.clear();
  invocations.clear();
  delivered = 0;

  const expected = changes * applications;
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < changes) {
      const i = next++;
      const device = ALICE.devices[i % ALICE.devices.length]!.id;
      await devices.updateOwnedDevice(ALICE.user.id, device, { place: `Bench ${i}` });
    }
  }));
  const deadline = Date.now() + 300_000;
  while (delivered < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await service.webhooks!.settled();
  const seconds = (lastAt - started) / 1000;
  const total = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
  const per = (map: Map<string, number>, fn: string) => (map.get(fn) ?? 0) / delivered;
  const figures = {
    changes, applications, events: expected, delivered, eventsPerSecond: delivered / seconds,
    dynamodbRequestsPerEvent: { fanOut: per(requests, 'fan-out-events'), deliver: per(requests, 'deliver-webhooks') },
    lambdaMsPerEvent: { fanOut: per(handlerMs, 'fan-out-events'), deliver: per(handlerMs, 'deliver-webhooks') },
    invocationsPerEvent: { fanOut: per(invocations, 'fan-out-events'), deliver: per(invocations, 'deliver-webhooks') },
    sqsRequestsPerEvent: { fanOut: per(sqsRequests, 'fan-out-events'), deliver: per(sqsRequests, 'deliver-webhooks') },
  };
  const row = (name: string, value: string) => `| ${name.padEnd(44)} | ${value.padStart(10)} |`;
  console.log([
    `Webhook pipeline, local service: ${changes} device changes × ${applications} subscribed applications = ${expected} events; ${delivered} delivered.`,
    '',
    row('Figure', 'Value'),
    row('-'.repeat(44), '-'.repeat(10)),
    row('Events delivered per second (end to end)', figures.eventsPerSecond.toFixed(1)),
    row('DynamoDB requests per delivered event', (total(requests) / delivered).toFixed(2)),
    row('  of which fan-out-events', figures.dynamodbRequestsPerEvent.fanOut.toFixed(2)),
    row('  of which deliver-webhooks', figures.dynamodbRequestsPerEvent.deliver.toFixed(2)),
    row('Lambda ms per delivered event (both)', (total(handlerMs) / delivered).toFixed(2)),
    row('  of which fan-out-events', figures.lambdaMsPerEvent.fanOut.toFixed(2)),
    row('  of which deliver-webhooks', figures.lambdaMsPerEvent.deliver.toFixed(2)),
    row('Invocations per delivered event, fan-out', figures.invocationsPerEvent.fanOut.toFixed(3)),
    row('Invocations per delivered event, delivery', figures.invocationsPerEvent.deliver.toFixed(3)),
    row('SQS requests per delivered event (SDK)', (total(sqsRequests) / delivered).toFixed(3)),
    row('  fan-out-events invocations', String(invocations.get('fan-out-events') ?? 0)),
    row('  deliver-webhooks invocations', String(invocations.get('deliver-webhooks') ?? 0)),
  ].join('\n'));
  // The `webhooks` section of bench-results.json, added to the file of the last `npm run bench` if there is one.
  const file = resolvePath('bench-results.json');
  const results = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {
    schemaVersion: 2, mode: 'webhooks', startedAt: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? '', cpuCount: cpus().length, node: process.version },
  };
  results.webhooks = { measuredAt: new Date().toISOString(), ...figures };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log('\nwrote the webhooks section of bench-results.json');
  if (delivered < expected) process.exitCode = 1;
} finally {
  doc.destroy();
  await service.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  setClientHook(undefined);
  rmSync(stateDir, { recursive: true, force: true });
}
