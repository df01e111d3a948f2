import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, UpdateCommand } from '#shared/data/commands';
import { isPlausibleClientId } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { NotFoundError } from '#shared/errors';
import type { BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { clientIdOfWebhookKey, fromItem, webhookKey } from '#shared/data/item-keys';
import { createWebhookDeliveries } from '#shared/data/webhook-deliveries';
import { newWebhookSecret, type WebhookSecret } from '#shared/domain/webhook';

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

export type WebhookRepo = ReturnType<typeof createWebhookRepo>;

/** A subscription as stored, with its application's id from its key. */
const toSubscription = (item: Record<string, unknown>): WebhookSubscription =>
  ({ ...fromItem<Omit<WebhookSubscription, 'clientId'>>(item), clientId: clientIdOfWebhookKey(item as { pk: string }) });

/**
 * The transaction item that deletes an application's subscription, with the application. Outside
 * the repository too, so that a function that only deletes it (an account's deletion) does not
 * bundle the repository and its deliveries.
 */
export function subscriptionDeletionItem(table: string, clientId: string): TransactItem {
  return { Delete: { TableName: table, Key: webhookKey(clientId) } };
}

/**
 * An application's subscription, as part of a combined read. Outside the repository too, so that a
 * page that only reads it (shared/pages/session.ts) does not bundle the repository.
 */
export function subscriptionRead(clientId: string): BatchRead<WebhookSubscription | undefined> {
  return {
    keys: isPlausibleClientId(clientId) ? [webhookKey(clientId)] : [],
    parse: ([item]) => (item ? toSubscription(item) : undefined),
  };
}

/** Access patterns on webhook subscriptions and deliveries. */
export function createWebhookRepo({ doc, table }: RepoDeps) {
  return {
    subscriptionRead,
    // The deliveries: webhook-deliveries.ts.
    ...createWebhookDeliveries({ doc, table }),

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
      return subscriptionDeletionItem(table, clientId);
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

  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const WEBHOOK_REPO_OPERATIONS = {
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
  createEventDelivery: { actions: ['PutItem', 'ConditionCheckItem'] },
  deliveryRead: { actions: ['BatchGetItem'] },
  getDelivery: { actions: ['GetItem'] },
  listDeliveries: { actions: ['Query'] },
  recordAttempt: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<WebhookRepo>;
