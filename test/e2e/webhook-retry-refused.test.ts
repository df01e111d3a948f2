import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { MAX_DELIVERY_ATTEMPTS } from '#shared/webhooks/deliver';
import { captureOutput } from '../support/capture-output';
import { useTable, useTestService } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

// Before any import: the one logger reads its level when its module loads. Errors only.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
});

// When SQS refuses a failed delivery's backoff (ChangeMessageVisibility), the delivery handler must
// neither lose the message nor spend its attempts unnoticed. Here the refusal is SQS's 12-hour rule
// on a compressed clock: at a time scale of 10⁻⁶ the 12 hours after a receipt are 43.2 real ms, and
// the receiver takes 100 ms to answer 500, so every backoff asked after it is refused, as SQS
// refuses one asked 27 hours after the receipt.
const TIME_SCALE = 1e-6;
const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0].id;

describe('webhooks: a backoff the queue refuses', () => {
  const stops: (() => Promise<void>)[] = [];
  // Every error line from here on is kept, and not printed.
  const logged = captureOutput(['stderr']);
  // After the capture's hooks: it starts once the errors are kept, and stops before they are printed again.
  const service = useTestService({ webhooks: { timeScale: TIME_SCALE } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('keeps the message, which comes back after the visibility timeout for every attempt, and logs each refusal without secrets', async () => {
    const hook = await startReceiver(() => ({ status: 500, afterMs: 100 }));
    stops.push(hook.stop);
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: 'Refused backoff', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    // A URL carrying a credential of the receiver's: it must not reach the logs either.
    const urlToken = `tok${randomUUID().replaceAll('-', '')}`;
    const { secret } = await webhooks.setUrl(clientId, `${hook.url}?token=${urlToken}`);
    const place = `Refused ${randomUUID().slice(0, 8)}`;
    await createDeviceRepo({ doc, table: service.tableName }).updateOwnedDevice(ALICE.user.id, DEVICE, { place });

    const deadline = Date.now() + 60_000;
    while (hook.received.length < MAX_DELIVERY_ATTEMPTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await service.webhooks!.settled();

    // Every attempt happened (none lost with its refused backoff), the last one dead-lettered.
    expect(hook.received).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    const [delivery] = await webhooks.listDeliveries(clientId);
    expect(delivery).toMatchObject({ status: 'dead', attempts: MAX_DELIVERY_ATTEMPTS, lastStatusCode: 500 });
    const deadLetter = service.webhooks!.queue.deadLetters().find((m) => JSON.parse(m.body).webhookId === delivery!.webhookId);
    expect(deadLetter).toBeDefined();
    const changes = service.webhooks!.queue.visibilityChanges().filter((c) => c.messageId === deadLetter!.messageId);
    expect(changes.map((c) => [c.receiveCount, c.refused])).toEqual(
      Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, i) => [i + 1, 'InvalidParameterValue']),
    );

    // One error line per refused backoff, naming the delivery and the attempt.
    const lines = logged.join('').split('\n').filter((line) => line.includes(delivery!.webhookId)).map((line) => JSON.parse(line) as Record<string, unknown>);
    const refusals = lines.filter((line) => String(line.message).startsWith('webhook retry delay not set'));
    expect(refusals.map((line) => line.attempt)).toEqual(Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, i) => i + 1));
    for (const line of refusals) {
      expect(line).toMatchObject({
        level: 'ERROR', clientId, webhookId: delivery!.webhookId, delaySeconds: expect.any(Number), backAfterSeconds: 90,
        error: { name: 'InvalidParameterValue', message: expect.stringContaining('Total VisibilityTimeout for the message is beyond the limit') },
      });
    }
    // Nothing else went wrong, and no line holds the signing secret, the URL's credential or the payload.
    expect(lines).toHaveLength(refusals.length);
    for (const text of [secret!, urlToken, place]) expect(logged.join('')).not.toContain(text);
  }, 90_000);
});
