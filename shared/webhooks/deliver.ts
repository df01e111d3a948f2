import type { BatchReader } from '#shared/data/batch-read';
import type { WebhookSubscription } from '#shared/data/webhook-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { liveSecrets } from '#shared/domain/webhook';
import { DEVICE_EVENT_SCOPE } from '#shared/webhooks/events';
import { postWebhook, type PostOutcome } from '#shared/webhooks/http-post';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { signWithSecrets } from '#shared/webhooks/signing';
import { checkWebhookUrl, type Resolve } from '#shared/webhooks/url-safety';

/**
 * SQS's longest visibility timeout, counted from a message's receipt: ChangeMessageVisibility's
 * new timeout counts from the call, and one that would end more than this after the receipt is
 * refused (InvalidParameterValue), not shortened (SQS API reference, ChangeMessageVisibility).
 */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;
/** The delivery function's timeout: a 5 s attempt per message, all messages of a batch at once, and the records around it. */
export const DELIVERY_FUNCTION_TIMEOUT_SECONDS = 15;
/** The queue's visibility timeout while a batch is handled: at least 6 times the function's timeout, as AWS advises for SQS event sources. */
export const QUEUE_VISIBILITY_TIMEOUT_SECONDS = 6 * DELIVERY_FUNCTION_TIMEOUT_SECONDS;
/**
 * The longest delay the delivery may ask for. A delay is the visibility timeout of the message
 * being handled (ChangeMessageVisibility), and SQS refuses one that ends more than 12 hours after
 * the message's receipt (SQS_MAX_VISIBILITY_SECONDS). The call comes at most the queue's visibility
 * timeout (Lambda invokes before the message is visible again) plus the function's timeout after
 * the receipt, so this much is always left.
 */
export const MAX_RETRY_DELAY_SECONDS = SQS_MAX_VISIBILITY_SECONDS - QUEUE_VISIBILITY_TIMEOUT_SECONDS - DELIVERY_FUNCTION_TIMEOUT_SECONDS;

/**
 * How long the delivery queue holds a failed delivery before the next attempt, after attempt 1, 2,
 * …: a backoff growing to 8 hours, each delay multiplied by a random 1 to 1.2 (jitter, so that
 * receivers that come back are not hit by every retry at once). The delays add up to 29 h 42 min
 * 30 s at least (35 h 39 min at most), so a delivery is tried 10 times over more than a day; after
 * the 10th failure it goes to the dead-letter queue. The longest, 8 h × 1.2 = 34,560 s, stays well
 * under MAX_RETRY_DELAY_SECONDS (43,095 s): SQS accepts every one of them, with hours to spare.
 */
export const RETRY_DELAYS_SECONDS = [30, 120, 600, 1800, 3600, 14_400, 28_800, 28_800, 28_800] as const;
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/**
 * The most delivery invocations at once: the delivery queue's event source mapping's maximum
 * concurrency (Lambda allows 2 to 1,000; the local queue stand-in honours it too). Lambda receives no
 * more messages than it can hand to this many invocations, so a capped mapping leaves messages
 * waiting in the queue, where their receive count (the attempt number) does not grow; a receive whose
 * invocation is throttled does count. At the planned 250,000 users the busiest hour needs about 41
 * (156 deliveries/s × 264 ms of Lambda per delivered event, docs/operations.md); 100 leaves room for
 * slow receivers (each batch waits for its slowest, up to 5 s) and still keeps deliveries to a tenth
 * of the default account concurrency (1,000), so they cannot starve the API. Raise it with the users.
 */
export const DELIVERY_MAX_CONCURRENCY = 100;
/** Messages per delivery invocation at most: the delivery queue's event source mapping's batch size (the local queue stand-in's too). */
export const DELIVERY_BATCH_SIZE = 10;
/** A receiver that has failed every delivery for this long is disabled, and its developer e-mailed. */
export const DISABLE_FAILING_AFTER_SECONDS = 3 * 24 * 3600;

/** The delay before attempt `attempt + 1`, with jitter (`random` in [0, 1)), never above MAX_RETRY_DELAY_SECONDS. */
export function retryDelaySeconds(attempt: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_SECONDS[Math.min(attempt, RETRY_DELAYS_SECONDS.length) - 1] ?? RETRY_DELAYS_SECONDS[0];
  return Math.min(MAX_RETRY_DELAY_SECONDS, Math.round(base * (1 + 0.2 * random())));
}

export type DeliveryOutcome =
  /** Delivered, or nothing (more) to deliver: the message is done. */
  | { result: 'done'; delivered: boolean }
  /** Failed; try again after this delay. */
  | { result: 'retry'; delaySeconds: number }
  /** Failed for the last time: to the dead-letter queue. */
  | { result: 'dead' };

/** The repository operations deliverMessage uses (its function's grants: functions/needs.ts). */
export const DELIVER_USES = {
  webhooks: ['deliveryRead', 'subscriptionRead', 'recordAttempt', 'markFailing', 'clearFailing', 'disableSubscription'], grants: ['consentRead'],
} as const satisfies UsesDeclaration;

export interface DeliverDeps extends Uses<typeof DELIVER_USES> {
  batch: Pick<BatchReader, 'read'>;
  /** The local service only: accept `http://localhost` receivers. */
  allowLocalHttp: boolean;
  /** E-mails the developer of an application whose webhook the service disabled. */
  notifyDisabled(subscription: WebhookSubscription): Promise<void>;
  resolve?: Resolve;
  post?: typeof postWebhook;
  now?: () => Date;
  random?: () => number;
}

/**
 * Delivers one queued message, attempt `attempt` (SQS's receive count): reads the delivery, the
 * subscription and, for a device event, the owner's consent (one BatchGetItem); drops it if the
 * webhook is gone or disabled, or the grant ended; checks the URL again (DNS may have changed) and
 * POSTs the signed payload to the checked address; records the attempt on the delivery (UpdateItem).
 * A failure marks the subscription failing (UpdateItem) and disables it when it has failed for
 * DISABLE_FAILING_AFTER_SECONDS.
 */
export async function deliverMessage(message: WebhookMessage, attempt: number, deps: DeliverDeps): Promise<DeliveryOutcome> {
  const { batch, webhooks, grants, now = () => new Date() } = deps;
  const { clientId, webhookId } = message;
  const [delivery, subscription, consent] = await batch.read([
    webhooks.deliveryRead(clientId, webhookId),
    webhooks.subscriptionRead(clientId),
    grants.consentRead(message.userId, message.userId ? clientId : undefined),
  ]);
  if (!delivery) return { result: 'done', delivered: false };
  if (delivery.status === 'delivered' && !message.redelivery) return { result: 'done', delivered: false };
  const drop = async (error: string) => {
    await webhooks.recordAttempt(clientId, webhookId, { status: 'failed', at: now(), error, attempted: false });
    return { result: 'done', delivered: false } as const;
  };
  if (!subscription) return drop('webhook removed');
  if (subscription.disabledAt !== undefined) return drop('webhook disabled');
  if (delivery.eventType.startsWith('device.') && !consent?.scopes.includes(DEVICE_EVENT_SCOPE)) return drop('grant ended');

  const at = now();
  const checked = await checkWebhookUrl(subscription.url, { allowLocalHttp: deps.allowLocalHttp, resolve: deps.resolve });
  let outcome: PostOutcome;
  if (!checked.ok) {
    outcome = { latencyMs: 0, error: 'address refused' };
  } else {
    const headers = signWithSecrets(liveSecrets(subscription.secrets, at), webhookId, at, delivery.payload);
    outcome = await (deps.post ?? postWebhook)(checked.url, checked.addresses[0]!, { ...headers }, delivery.payload);
  }
  const ok = outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const last = attempt >= MAX_DELIVERY_ATTEMPTS;
  await webhooks.recordAttempt(clientId, webhookId, {
    status: ok ? 'delivered' : last ? 'dead' : 'retrying',
    at, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, error: outcome.error,
  });
  if (ok) {
    if (subscription.failingSince !== undefined) await webhooks.clearFailing(clientId);
    return { result: 'done', delivered: true };
  }
  const failingSince = await webhooks.markFailing(clientId, at);
  if (failingSince !== undefined && at.getTime() - Date.parse(failingSince) >= DISABLE_FAILING_AFTER_SECONDS * 1000) {
    if (await webhooks.disableSubscription(clientId, failingSince, at)) await deps.notifyDisabled(subscription);
  }
  return last ? { result: 'dead' } : { result: 'retry', delaySeconds: retryDelaySeconds(attempt, deps.random) };
}
