import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isPlausibleClientId } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { NotFoundError } from '#shared/errors';
import type { BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { clientIdOfWebhookKey, deliveriesOfClientKey, deliveryKey, fromItem, webhookKey } from '#shared/data/keys';
import { newWebhookSecret, webhookIdTime, type WebhookEventType, type WebhookSecret } from '#shared/domain/webhook';

/** How long delivery items are kept for the console (TTL). */
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600;

/** An application's webhook: where events go and the secrets that sign them (current first). */
export interface WebhookSubscription {
  clientId: string;
  url: string;
  secrets: WebhookSecret[];
  /** ISO times. */
  createdAt: string;
  updatedAt: string;
  /** ISO time of the first failed delivery since the last success; absent while the receiver answers. */
  failingSince?: string;
  /** ISO time the service disabled the subscription (failing for days); a new URL (setUrl) enables it again. */
  disabledAt?: string;
}

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

export type WebhookRepo = ReturnType<typeof createWebhookRepo>;

/** Access patterns on webhook subscriptions and deliveries. */
const toSubscription = (item: Record<string, unknown>): WebhookSubscription =>
  ({ ...fromItem<Omit<WebhookSubscription, 'clientId'>>(item), clientId: clientIdOfWebhookKey(item as { pk: string }) });

/**
 * An application's subscription, as part of a combined read. Outside the repository too, so that a
 * page that only reads it (shared/accounts/session.ts) does not bundle the repository.
 */
export function subscriptionRead(clientId: string): BatchRead<WebhookSubscription | undefined> {
  return {
    keys: isPlausibleClientId(clientId) ? [webhookKey(clientId)] : [],
    parse: ([item]) => (item ? toSubscription(item) : undefined),
  };
}

export function createWebhookRepo({ doc, table }: RepoDeps) {
  const keyOf = (clientId: string, webhookId: string) => {
    const at = webhookIdTime(webhookId);
    return at === undefined ? undefined : deliveryKey(clientId, at.toISOString(), webhookId);
  };

  return {
    subscriptionRead,

    /** Several applications' subscriptions, aligned with `clientIds`, as part of a combined read. */
    subscriptionsRead(clientIds: readonly string[]): BatchRead<(WebhookSubscription | undefined)[]> {
      const wanted = clientIds.filter((id) => isPlausibleClientId(id));
      return {
        keys: wanted.map(webhookKey),
        parse: (items) => clientIds.map((id) => {
          const item = items[wanted.indexOf(id)];
          return item ? toSubscription(item) : undefined;
        }),
      };
    },

    /** One GetItem (strongly consistent: a rotation or a delivery acts on what it read). */
    async getSubscription(clientId: string): Promise<WebhookSubscription | undefined> {
      if (!isPlausibleClientId(clientId)) return undefined;
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: webhookKey(clientId), ConsistentRead: true }));
      return Item ? toSubscription(Item) : undefined;
    },

    /**
     * Sets the application's webhook URL (check it with checkWebhookUrl first). The first
     * registration creates the signing secret and returns it, once; a change of URL keeps the
     * secrets, and enables a subscription the service had disabled. One UpdateItem.
     */
    async setUrl(clientId: string, url: string, now = new Date()): Promise<{ created: boolean; secret?: string }> {
      const secret = newWebhookSecret();
      const at = now.toISOString();
      const { Attributes } = await doc.send(new UpdateCommand({
        TableName: table,
        Key: webhookKey(clientId),
        UpdateExpression: 'SET #url = :url, updatedAt = :at, createdAt = if_not_exists(createdAt, :at), secrets = if_not_exists(secrets, :secrets) REMOVE disabledAt, failingSince',
        ExpressionAttributeNames: { '#url': 'url' },
        ExpressionAttributeValues: { ':url': url, ':at': at, ':secrets': [{ secret, createdAt: epochSeconds(now) }] },
        ReturnValues: 'ALL_OLD',
      }));
      return Attributes?.secrets ? { created: false } : { created: true, secret };
    },

    /**
     * A new signing secret, returned once: it signs from now on, first; the current one keeps
     * signing too until `overlapSeconds` from now, then retires. Older ones are dropped.
     * NotFoundError without a subscription. GetItem + UpdateItem conditioned on what was read.
     */
    async rotateSecret(clientId: string, overlapSeconds: number, now = new Date()): Promise<string> {
      const current = await this.getSubscription(clientId);
      if (!current) throw new NotFoundError('This application has no webhook.');
      const secret = newWebhookSecret();
      const nowSeconds = epochSeconds(now);
      const previous = current.secrets[0];
      const secrets: WebhookSecret[] = [
        { secret, createdAt: nowSeconds },
        ...(previous && overlapSeconds > 0 ? [{ secret: previous.secret, createdAt: previous.createdAt, retiresAt: nowSeconds + overlapSeconds }] : []),
      ];
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: webhookKey(clientId),
          UpdateExpression: 'SET secrets = :secrets, updatedAt = :at',
          ConditionExpression: 'updatedAt = :read',
          ExpressionAttributeValues: { ':secrets': secrets, ':at': now.toISOString(), ':read': current.updatedAt },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new NotFoundError('The webhook changed meanwhile. Reload the page and try again.');
        throw error;
      }
      return secret;
    },

    /** Ends the subscription (its deliveries stay until their TTL). One DeleteItem. */
    async removeSubscription(clientId: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: webhookKey(clientId) }));
    },

    /** The transaction item that deletes the subscription with its application (post-delete-app). */
    deleteSubscriptionItem(clientId: string): TransactItem {
      return { Delete: { TableName: table, Key: webhookKey(clientId) } };
    },

    /**
     * Records that a delivery failed: sets `failingSince` unless already set, and returns it
     * (the start of the failing streak). One UpdateItem; undefined without a subscription.
     */
    async markFailing(clientId: string, now: Date): Promise<string | undefined> {
      try {
        const { Attributes } = await doc.send(new UpdateCommand({
          TableName: table,
          Key: webhookKey(clientId),
          UpdateExpression: 'SET failingSince = if_not_exists(failingSince, :at)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': now.toISOString() },
          ReturnValues: 'UPDATED_NEW',
        }));
        return Attributes?.failingSince as string | undefined;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return undefined;
        throw error;
      }
    },

    /** A delivery succeeded: the failing streak, if any, ends. One UpdateItem (only sent when `failingSince` was seen). */
    async clearFailing(clientId: string): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: webhookKey(clientId),
          UpdateExpression: 'REMOVE failingSince',
          ConditionExpression: 'attribute_exists(failingSince)',
        }));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /**
     * Disables a subscription whose receiver has failed since `failingSince`; true only for the
     * call that disabled it (so its developer is e-mailed once). One UpdateItem.
     */
    async disableSubscription(clientId: string, failingSince: string, now: Date): Promise<boolean> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: webhookKey(clientId),
          UpdateExpression: 'SET disabledAt = :at',
          ConditionExpression: 'attribute_not_exists(disabledAt) AND failingSince = :since',
          ExpressionAttributeValues: { ':at': now.toISOString(), ':since': failingSince },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** Stores a new delivery (`pending`, no attempts, TTL 30 days); false when it already exists (a record read twice). One PutItem. */
    async createDelivery(delivery: Pick<WebhookDelivery, 'clientId' | 'webhookId' | 'eventType' | 'payload' | 'userId'>, now: Date): Promise<boolean> {
      const key = keyOf(delivery.clientId, delivery.webhookId);
      if (!key) throw new Error('Not a webhook id');
      const item: WebhookDelivery = {
        ...delivery, status: 'pending', attempts: 0, createdAt: webhookIdTime(delivery.webhookId)!.toISOString(),
        expiresAt: epochSeconds(now) + DELIVERY_RETENTION_SECONDS,
      };
      try {
        await doc.send(new PutCommand({ TableName: table, Item: { ...key, ...item }, ConditionExpression: 'attribute_not_exists(pk)' }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
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

/** The DynamoDB actions each method sends (see table-access.ts). */
export const WEBHOOK_REPO_NEEDS = {
  subscriptionRead: { actions: ['BatchGetItem'] },
  subscriptionsRead: { actions: ['BatchGetItem'] },
  getSubscription: { actions: ['GetItem'] },
  setUrl: { actions: ['UpdateItem'] },
  rotateSecret: { actions: ['GetItem', 'UpdateItem'] },
  removeSubscription: { actions: ['DeleteItem'] },
  deleteSubscriptionItem: { actions: ['DeleteItem'] },
  markFailing: { actions: ['UpdateItem'] },
  clearFailing: { actions: ['UpdateItem'] },
  disableSubscription: { actions: ['UpdateItem'] },
  createDelivery: { actions: ['PutItem'] },
  deliveryRead: { actions: ['BatchGetItem'] },
  getDelivery: { actions: ['GetItem'] },
  listDeliveries: { actions: ['Query'] },
  recordAttempt: { actions: ['UpdateItem'] },
} as const satisfies RepoNeeds<WebhookRepo>;
