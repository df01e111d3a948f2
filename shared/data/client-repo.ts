import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { ConflictError, NotFoundError } from '#shared/errors';
import type { BatchRead } from '#shared/data/batch-read';
import { isCancelled, isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { clientKey, clientsOfDeveloperIndexKey, clientsOfDeveloperPartition, fromItem, secretRevealKey } from '#shared/data/item-keys';

export type ClientRepo = ReturnType<typeof createClientRepo>;

/**
 * A new client secret waiting to be shown once, on the page the registration or rotation redirects
 * to: encrypted under a key that only the developer's browser holds (a cookie), and stored under that
 * key's hash, so that neither the table nor the cookie alone reveals it. Read and deleted together.
 */
export interface SecretReveal {
  /** The hash of the browser's key. */
  keyHash: string;
  clientId: string;
  developerId: string;
  /** The secret, sealed under the browser's key (sealWith). */
  sealedSecret: string;
  /**
   * What issued the secret: the page says "Application registered" or "New client secret", or, for
   * the application's webhook signing secret, "Webhook registered" or "New webhook signing secret".
   */
  reason: 'registered' | 'rotated' | 'webhook-registered' | 'webhook-rotated';
  /** TTL (epoch seconds): unread, it is gone after this. */
  expiresAt: number;
}

const cancellationCodes = (error: unknown) =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);

/** Access patterns on registered applications. */
export function createClientRepo({ doc, table }: RepoDeps) {
  return {
    /** Applications by id, as part of a combined read (a missing or implausible id reads nothing). */
    clientsRead(clientIds: readonly (string | undefined)[]): BatchRead<(Client | undefined)[]> {
      const wanted = clientIds.filter((id): id is string => isPlausibleClientId(id));
      return {
        keys: wanted.map(clientKey),
        parse: (items) => clientIds.map((id) => {
          const item = id === undefined ? undefined : items[wanted.indexOf(id)];
          return item ? fromItem<Client>(item) : undefined;
        }),
      };
    },

    /** One GetItem. */
    async getClient(clientId: string): Promise<Client | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: clientKey(clientId) }));
      return Item ? fromItem<Client>(Item) : undefined;
    },

    /** Registers an application; refuses to overwrite one. */
    async createClient(client: Client): Promise<void> {
      await doc.send(new PutCommand({
        TableName: table,
        Item: { ...clientKey(client.clientId), ...clientsOfDeveloperIndexKey(client.developerId, client.createdAt), ...client },
        ConditionExpression: 'attribute_not_exists(pk)',
      }));
    },

    /** Registers an application with its secret to show once: one transaction, both or neither. */
    async registerClient(client: Client, reveal: SecretReveal): Promise<void> {
      await doc.send(new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: table,
              Item: { ...clientKey(client.clientId), ...clientsOfDeveloperIndexKey(client.developerId, client.createdAt), ...client },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          revealPut(reveal),
        ],
      }));
    },

    /**
     * Replaces a developer's own application's secret (NotFoundError otherwise): the current one
     * becomes the previous one (replacing any previous one), with the new secret to show once. One
     * transaction; a concurrent rotation of the same application makes it a ConflictError.
     */
    async rotateSecret(developerId: string, clientId: string, secretHash: string, at: string, reveal: SecretReveal): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: clientKey(clientId),
                // Every operand is the item before the update: the previous secret is the one replaced.
                UpdateExpression: 'SET previousSecretHash = secretHash, secretHash = :hash, secretCreatedAt = :at',
                ConditionExpression: 'developerId = :developer',
                ExpressionAttributeValues: { ':hash': secretHash, ':at': at, ':developer': developerId },
              },
            },
            revealPut(reveal),
          ],
        }));
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error)[0] === 'ConditionalCheckFailed') throw new NotFoundError('No such application.');
        if (isCancelled(error)) throw new ConflictError('The application changed meanwhile. Reload the page and try again.');
        throw error;
      }
    },

    /** Ends the previous secret of a developer's own application at once (NotFoundError otherwise). One UpdateItem. */
    async retirePreviousSecret(developerId: string, clientId: string): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: clientKey(clientId),
          UpdateExpression: 'REMOVE previousSecretHash',
          ConditionExpression: 'developerId = :developer',
          ExpressionAttributeValues: { ':developer': developerId },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new NotFoundError('No such application.');
        throw error;
      }
    },

    /**
     * Stores a secret to show once that no write of the application goes with (the webhook signing
     * secret, which the webhook repository creates). One PutItem.
     */
    async saveSecretReveal(reveal: SecretReveal): Promise<void> {
      await doc.send(new PutCommand(revealPut(reveal).Put!));
    },

    /**
     * Reads and deletes the secret waiting to be shown under `keyHash`, if it is that developer's,
     * for that application, and not past its TTL: one DeleteItem, so it is shown at most once.
     */
    async takeSecretReveal(keyHash: string, clientId: string, developerId: string, now: Date): Promise<Omit<SecretReveal, 'keyHash'> | undefined> {
      try {
        const { Attributes } = await doc.send(new DeleteCommand({
          TableName: table,
          Key: secretRevealKey(keyHash),
          ConditionExpression: 'clientId = :client AND developerId = :developer AND expiresAt > :now',
          ExpressionAttributeValues: { ':client': clientId, ':developer': developerId, ':now': epochSeconds(now) },
          ReturnValues: 'ALL_OLD',
        }));
        return Attributes ? fromItem<Omit<SecretReveal, 'keyHash'>>(Attributes) : undefined;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return undefined;
        throw error;
      }
    },

    /** The applications a developer registered, oldest first. One Query on GSI1. */
    async listClientsByDeveloper(developerId: string): Promise<Client[]> {
      const gsi1pk = clientsOfDeveloperPartition(developerId);
      const { Items = [] } = await doc.send(new QueryCommand({
        TableName: table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': gsi1pk },
      }));
      return Items.map((item) => fromItem<Client>(item));
    },

    /** Changes the given fields of a developer's own application (NotFoundError otherwise). */
    async updateClient(developerId: string, clientId: string, changes: Partial<Omit<Client, 'clientId' | 'developerId' | 'createdAt'>>): Promise<void> {
      const entries = Object.entries(changes);
      if (entries.length === 0) return;
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: clientKey(clientId),
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: 'developerId = :developer',
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
          ExpressionAttributeValues: { ':developer': developerId, ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])) },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new NotFoundError('No such application.');
        throw error;
      }
    },

    /** The transaction item that deletes a developer's own application (its condition fails otherwise). */
    deleteClientItem(developerId: string, clientId: string): TransactItem {
      return {
        Delete: {
          TableName: table,
          Key: clientKey(clientId),
          ConditionExpression: 'developerId = :developer',
          ExpressionAttributeValues: { ':developer': developerId },
        },
      };
    },
  };

  function revealPut(reveal: SecretReveal): TransactItem {
    const { keyHash, ...stored } = reveal;
    return { Put: { TableName: table, Item: { ...secretRevealKey(keyHash), ...stored }, ConditionExpression: 'attribute_not_exists(pk)' } };
  }
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const CLIENT_REPO_OPERATIONS = {
  clientsRead: { actions: ['BatchGetItem'] },
  getClient: { actions: ['GetItem'] },
  createClient: { actions: ['PutItem'] },
  registerClient: { actions: ['PutItem'] },
  rotateSecret: { actions: ['UpdateItem', 'PutItem'] },
  retirePreviousSecret: { actions: ['UpdateItem'] },
  saveSecretReveal: { actions: ['PutItem'] },
  takeSecretReveal: { actions: ['DeleteItem'] },
  listClientsByDeveloper: { actions: [], index: true },
  updateClient: { actions: ['UpdateItem'] },
  deleteClientItem: { actions: ['DeleteItem'] },
} as const satisfies RepoOperations<ClientRepo>;
