import type {
  BatchGetCommandInput, BatchGetCommandOutput, BatchWriteCommandInput, BatchWriteCommandOutput, DeleteCommandInput, DeleteCommandOutput,
  GetCommandInput, GetCommandOutput, PutCommandInput, PutCommandOutput, QueryCommandInput, QueryCommandOutput, ScanCommandInput,
  ScanCommandOutput, TransactGetCommandInput, TransactGetCommandOutput, TransactWriteCommandInput, TransactWriteCommandOutput,
  UpdateCommandInput, UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';

// The requests the repositories send (shared/data/document-client.ts sends them): the document
// client's commands, with its input and output types (plain values where DynamoDB has attribute
// values), without its classes, which bring the whole DynamoDB SDK client into every bundle. Each
// says which DynamoDB operation it is and which members of its request and answer hold attribute
// values, as DynamoDB's API reference defines them.

export type {
  BatchGetCommandInput, BatchWriteCommandInput, DeleteCommandInput, GetCommandInput, PutCommandInput, QueryCommandInput,
  ScanCommandInput, TransactGetCommandInput, TransactWriteCommandInput, UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';

/**
 * Where a request or answer holds attribute values: `VALUE` is the member itself, `VALUES` each
 * value of a map of them (an item, a key, ExpressionAttributeValues), `{ '*': nodes }` each entry of
 * a list or map by `nodes`, and named members their own nodes.
 */
export type KeyNodes = null | { readonly [member: string]: KeyNodes };
const VALUE = null;
const VALUES = {} as const;
const each = (nodes: KeyNodes) => ({ '*': nodes });

/** A request: its input, and (as a type) its answer; its class says its operation and key nodes. */
export abstract class TableCommand<Input extends object, Output extends object> {
  declare readonly output: Output;
  constructor(readonly input: Input) {}
}

/** What a command's class says of it (static members, so a request allocates nothing for them). */
export interface CommandClass {
  readonly operation: string;
  readonly nodes: { readonly input: KeyNodes; readonly output: KeyNodes };
}

/** The legacy condition parameters (Expected, filters by attribute): the values they compare with. */
const conditions = each({ Value: VALUE, AttributeValueList: VALUES });
const collectionMetrics = { ItemCollectionKey: VALUES };

export class GetCommand extends TableCommand<GetCommandInput, GetCommandOutput> {
  static readonly operation = 'GetItem';
  static readonly nodes = {
    input: { Key: VALUES },
    output: { Item: VALUES },
  };
}

export class PutCommand extends TableCommand<PutCommandInput, PutCommandOutput> {
  static readonly operation = 'PutItem';
  static readonly nodes = {
    input: { Item: VALUES, ExpressionAttributeValues: VALUES, Expected: conditions },
    output: { Attributes: VALUES, ItemCollectionMetrics: collectionMetrics },
  };
}

export class UpdateCommand extends TableCommand<UpdateCommandInput, UpdateCommandOutput> {
  static readonly operation = 'UpdateItem';
  static readonly nodes = {
    input: { Key: VALUES, ExpressionAttributeValues: VALUES, Expected: conditions, AttributeUpdates: each({ Value: VALUE }) },
    output: { Attributes: VALUES, ItemCollectionMetrics: collectionMetrics },
  };
}

export class DeleteCommand extends TableCommand<DeleteCommandInput, DeleteCommandOutput> {
  static readonly operation = 'DeleteItem';
  static readonly nodes = {
    input: { Key: VALUES, ExpressionAttributeValues: VALUES, Expected: conditions },
    output: { Attributes: VALUES, ItemCollectionMetrics: collectionMetrics },
  };
}

export class QueryCommand extends TableCommand<QueryCommandInput, QueryCommandOutput> {
  static readonly operation = 'Query';
  static readonly nodes = {
    input: { ExclusiveStartKey: VALUES, ExpressionAttributeValues: VALUES, KeyConditions: conditions, QueryFilter: conditions },
    output: { Items: each(VALUES), LastEvaluatedKey: VALUES },
  };
}

export class ScanCommand extends TableCommand<ScanCommandInput, ScanCommandOutput> {
  static readonly operation = 'Scan';
  static readonly nodes = {
    input: { ExclusiveStartKey: VALUES, ExpressionAttributeValues: VALUES, ScanFilter: conditions },
    output: { Items: each(VALUES), LastEvaluatedKey: VALUES },
  };
}

const keysByTable = each({ Keys: each(VALUES) });

export class BatchGetCommand extends TableCommand<BatchGetCommandInput, BatchGetCommandOutput> {
  static readonly operation = 'BatchGetItem';
  static readonly nodes = {
    input: { RequestItems: keysByTable },
    output: { Responses: each(each(VALUES)), UnprocessedKeys: keysByTable },
  };
}

const writesByTable = each(each({ PutRequest: { Item: VALUES }, DeleteRequest: { Key: VALUES } }));

export class BatchWriteCommand extends TableCommand<BatchWriteCommandInput, BatchWriteCommandOutput> {
  static readonly operation = 'BatchWriteItem';
  static readonly nodes = {
    input: { RequestItems: writesByTable },
    output: { UnprocessedItems: writesByTable, ItemCollectionMetrics: each(each(collectionMetrics)) },
  };
}

export class TransactGetCommand extends TableCommand<TransactGetCommandInput, TransactGetCommandOutput> {
  static readonly operation = 'TransactGetItems';
  static readonly nodes = {
    input: { TransactItems: each({ Get: { Key: VALUES } }) },
    output: { Responses: each({ Item: VALUES }) },
  };
}

export class TransactWriteCommand extends TableCommand<TransactWriteCommandInput, TransactWriteCommandOutput> {
  static readonly operation = 'TransactWriteItems';
  static readonly nodes = {
    input: {
    TransactItems: each({
      ConditionCheck: { Key: VALUES, ExpressionAttributeValues: VALUES },
      Put: { Item: VALUES, ExpressionAttributeValues: VALUES },
      Delete: { Key: VALUES, ExpressionAttributeValues: VALUES },
      Update: { Key: VALUES, ExpressionAttributeValues: VALUES },
    }),
  },
    output: { ItemCollectionMetrics: each(each(collectionMetrics)) },
  };
}
