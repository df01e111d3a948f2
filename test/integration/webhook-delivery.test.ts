import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchReader } from '#shared/data/batch-read';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { deliverMessage, type DeliverDeps } from '#shared/webhooks/deliver';
import { testEvent } from '#shared/webhooks/events';
import { newWebhookId } from '#shared/domain/webhook';
import { postWebhook } from '#shared/webhooks/http-post';
import { checkWebhookUrl } from '#shared/webhooks/url-safety';
import { freshTable } from '../support/service';

// The URL is checked again at every delivery: a host name that resolved to a public address when
// the webhook was registered and now resolves to a private one (DNS rebinding) gets nothing.
describe('webhook delivery: the URL check at delivery time', () => {
  let deps: DeliverDeps;
  let destroy: () => void;
  let addresses: string[];
  const posted: string[] = [];

  beforeAll(async () => {
    const { doc, table } = await freshTable();
    destroy = () => doc.destroy();
    deps = {
      batch: createBatchReader({ doc, table }),
      webhooks: createWebhookRepo({ doc, table }),
      grants: createGrantRepo({ doc, table }),
      allowLocalHttp: false,
      notifyDisabled: async () => undefined,
      resolve: async () => addresses,
      // The real sender, counted: a refused address must never reach it.
      post: (url, address, headers, body) => {
        posted.push(address);
        return postWebhook(url, address, headers, body);
      },
    };
  });
  afterAll(() => destroy?.());

  it('refuses a host that now resolves to a private address, and records why', async () => {
    const webhooks = deps.webhooks as ReturnType<typeof createWebhookRepo>;
    const clientId = `app-${randomUUID()}`;
    const url = 'https://hooks.rebinding.example/in';
    addresses = ['93.184.215.14'];
    const registered = await checkWebhookUrl(url, { allowLocalHttp: false, resolve: deps.resolve });
    expect(registered.ok).toBe(true);
    await webhooks.setUrl(clientId, url);

    addresses = ['10.0.0.7'];
    const at = new Date();
    const webhookId = newWebhookId(at);
    await webhooks.createDelivery({ clientId, webhookId, eventType: 'webhook.test', payload: JSON.stringify(testEvent(clientId, at)) }, at);
    const outcome = await deliverMessage({ clientId, webhookId }, 1, deps);
    expect(outcome).toMatchObject({ result: 'retry', delaySeconds: expect.any(Number) });
    expect(posted).toEqual([]);
    expect(await webhooks.getDelivery(clientId, webhookId)).toMatchObject({ status: 'retrying', attempts: 1, lastError: 'address refused' });
  });
});
