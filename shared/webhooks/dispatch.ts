import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { newWebhookId } from '#shared/domain/webhook';
import { testEvent } from '#shared/webhooks/events';
import type { WebhookQueue } from '#shared/webhooks/queue';

/** The repository operations `redeliver` uses (the console's "send again": its grants, functions/needs.ts). */
export const REDELIVER_USES = { webhooks: ['getDelivery', 'recordAttempt'] } as const satisfies UsesDeclaration;
/** The repository operations `sendTestEvent` uses. */
export const SEND_TEST_EVENT_USES = { webhooks: ['getSubscription', 'createDelivery'] } as const satisfies UsesDeclaration;

export interface DispatchDeps extends Uses<readonly [typeof REDELIVER_USES, typeof SEND_TEST_EVENT_USES]> {
  queue: WebhookQueue;
  now?: () => Date;
}

/**
 * "Send again" and "send test event" of the developer console, given their repository and queue
 * (the console's functions get the one shared/runtime.ts builds).
 */
export function createDispatch({ webhooks, queue, now = () => new Date() }: DispatchDeps) {
  return {
    /**
     * Sends a delivery again: the same `webhook-id` and the same body (signed anew, with a new
     * timestamp), whatever its status. False when the application has no such delivery (or it
     * expired). GetItem + UpdateItem (back to `pending`) + one queue message.
     */
    async redeliver(clientId: string, webhookId: string): Promise<boolean> {
      const delivery = await webhooks.getDelivery(clientId, webhookId);
      if (!delivery || delivery.expiresAt <= Math.floor(now().getTime() / 1000)) return false;
      await webhooks.recordAttempt(clientId, webhookId, { status: 'pending', at: now() });
      const userId = delivery.eventType.startsWith('device.') ? delivery.userId : undefined;
      await queue.send([{ clientId, webhookId, redelivery: true, ...(userId ? { userId } : {}) }]);
      return true;
    },

    /**
     * Queues a `webhook.test` event to the application's webhook and returns its webhook id;
     * undefined when the application has no webhook. GetItem + PutItem + one queue message.
     */
    async sendTestEvent(clientId: string): Promise<string | undefined> {
      if (!(await webhooks.getSubscription(clientId))) return undefined;
      const at = now();
      const webhookId = newWebhookId(at);
      await webhooks.createDelivery({ clientId, webhookId, eventType: 'webhook.test', payload: JSON.stringify(testEvent(clientId, at)) }, at);
      await queue.send([{ clientId, webhookId }]);
      return webhookId;
    },
  };
}
