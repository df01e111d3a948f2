import type { RepoNeeds } from '#shared/data/table-access';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import { NotFoundError } from '#shared/errors';
import type { BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { clientKey, clientsOfDeveloperIndexKey, fromItem } from '#shared/data/keys';

export type ClientRepo = ReturnType<typeof createClientRepo>;

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

    /** The applications a developer registered, oldest first. One Query on GSI1. */
    async listClientsByDeveloper(developerId: string): Promise<Client[]> {
      const { gsi1pk } = clientsOfDeveloperIndexKey(developerId, '');
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
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const CLIENT_REPO_NEEDS = {
  clientsRead: { actions: ['BatchGetItem'] },
  getClient: { actions: ['GetItem'] },
  createClient: { actions: ['PutItem'] },
  listClientsByDeveloper: { actions: [], index: true },
  updateClient: { actions: ['UpdateItem'] },
  deleteClientItem: { actions: ['DeleteItem'] },
} as const satisfies RepoNeeds<ClientRepo>;
