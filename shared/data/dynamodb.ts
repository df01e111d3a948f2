import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { awsClientConfig, localEndpointConfig, observeClient, type AwsCallLimits } from '#shared/aws/client-config';

/** What every repository is created with, so the same code runs in tests and in Lambda. */
export interface RepoDeps {
  doc: DynamoDBDocumentClient;
  table: string;
}

/** Every item of a Query on the table, page by page (one request per 1 MB page). */
export async function queryAll(
  { doc, table }: RepoDeps, input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName' | 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ ...input, TableName: table, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** TransactWriteItems takes at most 100 items. */
export const MAX_TRANSACTION_ITEMS = 100;

/** One item of a TransactWriteItems request: repositories hand these out so a caller can write several together. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface DocumentClientOptions {
  /** DynamoDB Local's URL; absent in AWS. */
  endpoint?: string;
  /** The region named to DynamoDB Local (with `endpoint` only; default `local`). */
  region?: string;
  /** Looser limits than the service's (AWS_CALL_LIMITS), for tools and tests only. */
  limits?: Partial<AwsCallLimits>;
}

/**
 * A document client that drops undefined members and keeps numbers as numbers, with the service's
 * timeouts and retry budget (AWS_CALL_LIMITS).
 */
export function createDocumentClient({ endpoint, region, limits }: DocumentClientOptions = {}): DynamoDBDocumentClient {
  const client = observeClient(new DynamoDBClient({ ...awsClientConfig(limits), ...localEndpointConfig(endpoint, region) }));
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

// Repositories import the error checks from here, next to the client they come from.
export { isConditionalCheckFailed, isTransientStorageError, TRANSIENT_ERROR_NAMES } from '#shared/data/storage-errors';

/** Whether a TransactWriteItems was cancelled (a condition failed, or a conflict with a concurrent write). */
export const isCancelled = (error: unknown) => error instanceof Error && error.name === 'TransactionCanceledException';

/** The cancellation reason of each item of a cancelled transaction, in the order of its items. */
export const cancellationCodes = (error: unknown) =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);
