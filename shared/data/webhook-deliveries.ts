import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import type { BatchRead } from '#shared/data/batch-read';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { consentKey, deliveriesOfClientKey, deliveryKey, fromItem, webhookKey } from '#shared/data/item-keys';
import { isPlausibleClientId } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { webhookIdTime, type WebhookEventType } from '#shared/domain/webhook';

// The webhook repository's deliveries (webhook-repo.ts spreads them into it): one item per event
// and application, under the application, sorted by the time in its webhook id.

/** How long delivery items are kept for the console (TTL). */
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600;

export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'dead';

/** One event sent (or being sent) to one application, with its attempts. */
export interface WebhookDelivery {
  clientId: string;
  webhookId: string;
  eventType: WebhookEventType;
  /** The exact JSON body sent (the same bytes on every attempt and redelivery). */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode?: number;
  lastLatencyMs?: number;
  /** ISO time. */
  lastAttemptAt?: string;
  /** Why the last attempt failed without an HTTP status, or why the delivery was dropped, in a few words. */
  lastError?: string;
  /** The device owner whose grant the event depends on (device and grant events). */
  userId?: string;
  /** ISO time: also the start of its sort key. */
  createdAt: string;
  /** TTL (epoch seconds). */
  expiresAt: number;
}

/**
 * What must still exist for a table change's delivery to be written: the application's webhook (a
 * grant event), or the owner's consent to the application (a device event, whose delivery names the owner).
 */
export type DeliveryGuard = 'webhook' | 'consent';

/** A fan-out's write: written, there already (a stream record read twice), or not written because its guard is gone. */
export type EventDeliveryOutcome = 'created' | 'exists' | 'gone';

type NewDelivery = Pick<WebhookDelivery, 'clientId' | 'webhookId' | 'eventType' | 'payload' | 'userId'>;

/** What one delivery attempt came to. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  at: Date;
  statusCode?: number;
  latencyMs?: number;
  error?: string;
  /** False for a delivery dropped without sending (grant ended, webhook removed or disabled): not an attempt. */
  attempted?: boolean;
}

function requireUser(delivery: NewDelivery): string {
  if (!delivery.userId) throw new Error('A delivery guarded by a consent names its user');
  return delivery.userId;
}

/** The delivery methods of the webhook repository (its WEBHOOK_REPO_OPERATIONS declares their actions). */
export function createWebhookDeliveries({ doc, table }: RepoDeps) {
  const keyOf = (clientId: string, webhookId: string) => {
    const at = webhookIdTime(webhookId);
    return at === undefined ? undefined : deliveryKey(clientId, at.toISOString(), webhookId);
  };
  const newItem = (delivery: NewDelivery, now: Date) => {
    const key = keyOf(delivery.clientId, delivery.webhookId);
    if (!key) throw new Error('Not a webhook id');
    const item: WebhookDelivery = {
      ...delivery, status: 'pending', attempts: 0, createdAt: webhookIdTime(delivery.webhookId)!.toISOString(),
      expiresAt: epochSeconds(now) + DELIVERY_RETENTION_SECONDS,
    };
    return { ...key, ...item };
  };

  return {
    /** Stores a new delivery (`pending`, no attempts, TTL 30 days); false when it already exists (a record read twice). One PutItem. */
    async createDelivery(delivery: NewDelivery, now: Date): Promise<boolean> {
      try {
        await doc.send(new PutCommand({ TableName: table, Item: newItem(delivery, now), ConditionExpression: 'attribute_not_exists(pk)' }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /**
     * Stores a new delivery of a table change's event as createDelivery does, but only while its
     * guard exists (`consent`: the consent of `delivery.userId` to the application): one
     * TransactWriteItems of the PutItem and a ConditionCheck, so a fan-out that read the webhook or
     * consent before a deletion cannot write after it (an account's deletion removes the consents,
     * then the webhook, then the deliveries it can find). 'gone': the guard is gone, nothing written.
     */
    async createEventDelivery(delivery: NewDelivery, guard: DeliveryGuard, now: Date): Promise<EventDeliveryOutcome> {
      const guardKey = guard === 'webhook' ? webhookKey(delivery.clientId) : consentKey(requireUser(delivery), delivery.clientId);
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: newItem(delivery, now), ConditionExpression: 'attribute_not_exists(pk)' } },
            { ConditionCheck: { TableName: table, Key: guardKey, ConditionExpression: 'attribute_exists(pk)' } },
          ],
        }));
        return 'created';
      } catch (error) {
        if (!isCancelled(error)) throw error;
        const [put, check] = cancellationCodes(error);
        // A conflict with a concurrent write (TransactionConflict) is thrown: the stream hands the batch over again.
        if (check === 'ConditionalCheckFailed') return 'gone';
        if (put === 'ConditionalCheckFailed') return 'exists';
        throw error;
      }
    },

    /** A delivery by its webhook id, as part of a combined read (an id that is not one reads nothing). */
    deliveryRead(clientId: string, webhookId: string): BatchRead<WebhookDelivery | undefined> {
      const key = isPlausibleClientId(clientId) ? keyOf(clientId, webhookId) : undefined;
      return {
        keys: key ? [key] : [],
        parse: ([item]) => (item ? fromItem<WebhookDelivery>(item) : undefined),
      };
    },

    /** A delivery by its webhook id: one GetItem (none for a string that is not a webhook id). */
    async getDelivery(clientId: string, webhookId: string): Promise<WebhookDelivery | undefined> {
      const key = isPlausibleClientId(clientId) ? keyOf(clientId, webhookId) : undefined;
      if (!key) return undefined;
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
      return Item ? fromItem<WebhookDelivery>(Item) : undefined;
    },

    /** The application's last deliveries, newest first. One Query. */
    async listDeliveries(clientId: string, limit = 20): Promise<WebhookDelivery[]> {
      if (!isPlausibleClientId(clientId)) return [];
      const now = epochSeconds(new Date());
      const { Items = [] } = await doc.send(new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': deliveriesOfClientKey(clientId).pk },
        ScanIndexForward: false,
        Limit: limit,
      }));
      return Items.map((item) => fromItem<WebhookDelivery>(item)).filter((d) => d.expiresAt > now);
    },

    /** Records one attempt (or a drop, or a redelivery's reset to `pending`): one UpdateItem; the attempt count grows for an attempt only. */
    async recordAttempt(clientId: string, webhookId: string, outcome: AttemptOutcome): Promise<void> {
      const key = keyOf(clientId, webhookId);
      if (!key) return;
      const set: Record<string, unknown> = { status: outcome.status };
      if (outcome.status !== 'pending') set.lastAttemptAt = outcome.at.toISOString();
      if (outcome.statusCode !== undefined) set.lastStatusCode = outcome.statusCode;
      if (outcome.latencyMs !== undefined) set.lastLatencyMs = outcome.latencyMs;
      if (outcome.error !== undefined) set.lastError = outcome.error;
      const entries = Object.entries(set);
      const counted = outcome.status !== 'pending' && outcome.attempted !== false;
      // An attempt replaces the previous one's status code or error; a drop keeps the last status code beside its reason.
      const removals = counted ? [outcome.statusCode === undefined ? 'lastStatusCode' : undefined, outcome.error === undefined ? 'lastError' : undefined]
        .filter((name) => name !== undefined) : [];
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`
            + (counted ? ' ADD attempts :one' : '')
            + (removals.length ? ` REMOVE ${removals.join(', ')}` : ''),
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
            ...(counted ? { ':one': 1 } : {}),
          },
        }));
      } catch (error) {
        // The delivery item expired (TTL) or was never written: nothing to record on.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },
  };
}
