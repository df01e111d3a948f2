import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '#shared/data/commands';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { webhookKey } from '#shared/data/item-keys';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { DISABLE_FAILING_AFTER_SECONDS } from '#shared/webhooks/deliver';
import { mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

// A receiver that has failed for days is disabled and its developer e-mailed (through SES, here its
// stand-in, as in AWS); one that answers again ends its failing streak.
const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0].id;

describe('webhooks: a receiver failing for days', () => {
  const service = useTestService({ awsStandIns: true, webhooks: { timeScale: 1e-4 } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  const stops: (() => Promise<void>)[] = [];

  async function subscribedApp(url: string, failingSince?: Date) {
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: `Flaky ${clientId.slice(4, 10)}`, description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    await webhooks.setUrl(clientId, url);
    if (failingSince) {
      await doc.send(new UpdateCommand({
        TableName: service.tableName, Key: webhookKey(clientId), UpdateExpression: 'SET failingSince = :at', ExpressionAttributeValues: { ':at': failingSince.toISOString() },
      }));
    }
    return clientId;
  }

  // The change a PUT /devices/{id} makes (tokens here are signed by the KMS stand-in's key: the table write is what matters).
  const putDevice = (place: string) => createDeviceRepo({ doc, table: service.tableName }).updateOwnedDevice(ALICE.user.id, DEVICE, { place });

  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('is disabled at its next failure, its developer e-mailed once, and later events are not sent to it', async () => {
    const hook = await startReceiver(() => 500);
    stops.push(hook.stop);
    const longAgo = new Date(Date.now() - (DISABLE_FAILING_AFTER_SECONDS + 60) * 1000);
    const clientId = await subscribedApp(hook.url, longAgo);
    await putDevice('Disable me');
    await hook.next((r) => r.body.includes('Disable me'), 10_000);
    await service.webhooks!.settled();

    const subscription = await webhooks.getSubscription(clientId);
    expect(subscription?.disabledAt).toEqual(expect.any(String));
    const mails = (await mailTo(service, ALICE.user.email)).filter((m) => m.subject.startsWith('Webhook of'));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain(hook.url);
    expect(service.aws!.sentEmails().filter((m) => m.to === ALICE.user.email)).toHaveLength(1);
    // Dropped after the disabling: the one failed attempt, nothing more.
    expect(hook.received.filter((r) => r.body.includes('Disable me'))).toHaveLength(1);
    const [delivery] = await webhooks.listDeliveries(clientId);
    expect(delivery).toMatchObject({ status: 'failed', lastError: 'webhook disabled', attempts: 1, lastStatusCode: 500 });

    await putDevice('While disabled');
    await service.webhooks!.settled();
    expect(hook.received.filter((r) => r.body.includes('While disabled'))).toEqual([]);

    // Saving the URL again turns it back on.
    await webhooks.setUrl(clientId, hook.url);
    expect(await webhooks.getSubscription(clientId)).not.toHaveProperty('disabledAt');
  }, 60_000);

  it('a success ends the failing streak', async () => {
    const hook = await startReceiver(() => 204);
    stops.push(hook.stop);
    const clientId = await subscribedApp(hook.url, new Date(Date.now() - 3600_000));
    await putDevice('Back again');
    await hook.next((r) => r.body.includes('Back again'), 10_000);
    await service.webhooks!.settled();
    expect(await webhooks.getSubscription(clientId)).not.toHaveProperty('failingSince');
  });
});
