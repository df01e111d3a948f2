import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '#shared/data/table-schema';

// The peer's storage: oidc-provider's adapter interface (one instance per model name: upsert, find,
// findByUid, findByUserCode, consume, destroy, revokeByGrantId), written for this benchmark against
// the service's own table on the same DynamoDB Local. One item per stored model instance:
//
//   pk = sk = PEER#<model>#<id>   payload (the provider's JSON, as a map), expiresAt (TTL, epoch s)
//   gsi1pk  = PEER#grant#<grantId> (tokens and codes of a grant: revokeByGrantId)
//           | PEER#uid#<uid> (Session: findByUid) | PEER#userCode#<code> (DeviceCode, unused here)
//
// `consume` is a conditional update (only an unconsumed item), so two concurrent exchanges of one code,
// or rotations of one refresh token, cannot both pass: the provider reads `consumed` and then calls
// `consume`, which alone would let a race through. A lost race throws, and the provider answers 500
// (server_error) to the loser instead of invalid_grant; no second token is issued.

const PREFIX = 'PEER';
const { partitionKey: PK, sortKey: SK, ttlAttribute: TTL, gsi1 } = TABLE_SCHEMA;

/** What oidc-provider stores for each model instance (its own JSON). */
export type AdapterPayload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** The interface oidc-provider calls (its documented adapter contract). */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** Raised when a consume lost to a concurrent one: the code or refresh token is already spent. */
export class AlreadyConsumedError extends Error {
  constructor(readonly model: string) {
    super(`${model} already consumed`);
    this.name = 'AlreadyConsumedError';
  }
}

const itemKey = (model: string, id: string) => {
  const key = `${PREFIX}#${model}#${id}`;
  return { [PK]: key, [SK]: key };
};
const nowSeconds = () => Math.floor(Date.now() / 1000);
/** An item past its TTL is gone for the provider, even before DynamoDB deletes it. */
const live = (item: Record<string, unknown> | undefined) =>
  (item && (typeof item[TTL] !== 'number' || (item[TTL] as number) > nowSeconds()) ? (item.payload as AdapterPayload) : undefined);

/**
 * The adapter class oidc-provider's `adapter` setting takes (`new Adapter(modelName)`), over the
 * given document client and table. Every DynamoDB request the peer makes goes through `doc`.
 */
export function dynamoDbAdapter(doc: DynamoDBDocumentClient, table: string): new (model: string) => OidcAdapter {
  return class DynamoDbAdapter implements OidcAdapter {
    constructor(readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const index = payload.grantId ? `grant#${payload.grantId}` : payload.uid ? `uid#${payload.uid}` : payload.userCode ? `userCode#${payload.userCode}` : undefined;
      await doc.send(new PutCommand({
        TableName: table,
        Item: {
          ...itemKey(this.model, id),
          payload,
          ...(index ? { [gsi1.partitionKey]: `${PREFIX}#${index}`, [gsi1.sortKey]: `${this.model}#${id}` } : {}),
          ...(expiresIn ? { [TTL]: nowSeconds() + expiresIn } : {}),
        },
      }));
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: itemKey(this.model, id), ConsistentRead: true }));
      return live(Item);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findByIndex(`uid#${uid}`);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findByIndex(`userCode#${userCode}`);
    }

    async consume(id: string): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: itemKey(this.model, id),
          UpdateExpression: 'SET #payload.#consumed = :now',
          ConditionExpression: `attribute_exists(${PK}) AND attribute_not_exists(#payload.#consumed)`,
          ExpressionAttributeNames: { '#payload': 'payload', '#consumed': 'consumed' },
          ExpressionAttributeValues: { ':now': nowSeconds() },
        }));
      } catch (error) {
        if ((error as Error).name === 'ConditionalCheckFailedException') throw new AlreadyConsumedError(this.model);
        throw error;
      }
    }

    async destroy(id: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: itemKey(this.model, id) }));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new QueryCommand({
          TableName: table, IndexName: gsi1.name, KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': gsi1.partitionKey }, ExpressionAttributeValues: { ':pk': `${PREFIX}#grant#${grantId}` },
          ExclusiveStartKey: start,
        }));
        await Promise.all((page.Items ?? []).map((item) => doc.send(new DeleteCommand({ TableName: table, Key: { [PK]: item[PK], [SK]: item[SK] } }))));
        start = page.LastEvaluatedKey;
      } while (start);
      // The grant itself (model "Grant", id = grantId) carries no grantId of its own.
      await doc.send(new DeleteCommand({ TableName: table, Key: itemKey('Grant', grantId) }));
    }

    private async findByIndex(index: string): Promise<AdapterPayload | undefined> {
      const { Items } = await doc.send(new QueryCommand({
        TableName: table, IndexName: gsi1.name, KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': gsi1.partitionKey }, ExpressionAttributeValues: { ':pk': `${PREFIX}#${index}` }, Limit: 1,
      }));
      return live(Items?.[0]);
    }
  };
}
