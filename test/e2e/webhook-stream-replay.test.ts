import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { serviceFacts } from '#local/service';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import type { StreamBatchFailure } from '#shared/webhooks/stream-failures';
import { withFailure } from '../support/inject-failure';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

// No webhook event is lost without a trace, on the local service: while the fan-out cannot write
// (its every delivery transaction refused), the stream reader retries a change as Lambda's event
// source mapping does, gives up, and puts Lambda's on-failure record in the stream-failures queue;
// once the cause is gone, `npm run admin -- replay-stream-failures` reads the change again from the
// stream and its webhook reaches the receiver.

const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0].id;

describe('npm run admin -- replay-stream-failures', () => {
  const service = useTestService({ webhooks: { timeScale: 1e-4 } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  let local: Record<string, string>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    local = { STATE_DIR: dirname(service.signingKeyFile), TABLE_NAME: '' };
    writeFileSync(join(local.STATE_DIR!, 'service.json'), JSON.stringify(serviceFacts(service)));
    receiver = await startReceiver();
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: 'Replayed app', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    await createWebhookRepo({ doc, table: service.tableName }).setUrl(clientId, receiver.url);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  const failureRecords = () => service.webhooks!.streamFailures.bodies().map((b) => JSON.parse(b) as StreamBatchFailure);

  it('a change the fan-out failed on every retry waits in the stream-failures queue, and the replay delivers its webhook', async () => {
    // A connection change stamped with a time of its own, to find its webhook by.
    const at = `2031-0${1 + Math.floor(Math.random() * 9)}-1${Math.floor(Math.random() * 9)}T0${Math.floor(Math.random() * 9)}:00:00.${String(Date.now() % 1000).padStart(3, '0')}`;
    // Every delivery write of the fan-out refused while the change is handed over and retried. The
    // handlers' client, imported once the service has set their environment (an import at the top
    // would build it before, without the local endpoint).
    const { doc: handlersDoc } = await import('#shared/runtime');
    const given = await withFailure(handlersDoc, 'TransactWriteItemsCommand', () => Object.assign(new Error('injected: storage unavailable'), { name: 'InternalServerError' }), async () => {
      await createDeviceRepo({ doc, table: service.tableName }).setConnection(ALICE.user.id, DEVICE, true, at);
      const deadline = Date.now() + 60_000;
      while (failureRecords().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    });
    expect(given.status).toBe('fulfilled');
    expect(receiver.received.filter((r) => r.body.includes(at))).toEqual([]);
    expect(failureRecords()).toEqual([expect.objectContaining({
      requestContext: expect.objectContaining({ condition: 'RetryAttemptsExhausted', approximateInvokeCount: 11 }),
      DDBStreamBatchInfo: expect.objectContaining({ batchSize: 1 }),
    })]);

    const { code, stdout, stderr } = await runTool('local/admin.ts', ['replay-stream-failures'], local, 120_000);

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout) as { replayed: { records: number; queued: number }[]; failed: unknown[]; expired: unknown[]; refused: unknown[] };
    expect(report).toMatchObject({ replayed: [{ records: 1 }], failed: [], expired: [], refused: [] });
    expect(report.replayed[0]!.queued).toBeGreaterThanOrEqual(1);
    const got = await receiver.next((r) => r.body.includes(at), 20_000);
    expect(JSON.parse(got.body)).toMatchObject({ type: 'device.connection_changed', data: { device_id: DEVICE, connected: true, last_connection: at } });
    expect(service.webhooks!.streamFailures.bodies()).toEqual([]);
  }, 180_000);

  it('refuses a message that is not an on-failure record: exit 1, the reason printed, the message kept, nothing delivered', async () => {
    service.webhooks!.streamFailures.put('{"hello":"world"}');
    const before = receiver.received.length;

    const { code, stdout } = await runTool('local/admin.ts', ['replay-stream-failures'], local, 100_000);

    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      replayed: [], refused: [{ problem: 'the message has no DDBStreamBatchInfo: not an on-failure record of a DynamoDB stream' }],
    });
    expect(service.webhooks!.streamFailures.bodies()).toEqual(['{"hello":"world"}']);
    expect(receiver.received.length).toBe(before);
  }, 120_000);
});
