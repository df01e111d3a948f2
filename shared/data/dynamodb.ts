import { QueryCommand, type TransactWriteCommandInput } from '#shared/data/commands';
import { observeClient } from '#shared/aws/client-config';
import { DocumentClient, type DocumentClientOptions } from '#shared/data/document-client';

export type { DocumentClientOptions };

/** What every repository is created with, so the same code runs in tests and in Lambda. */
export interface RepoDeps {
  doc: DocumentClient;
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

/**
 * A document client that drops undefined members and keeps numbers as numbers, with the service's
 * timeouts and retry budget (AWS_CALL_LIMITS): see document-client.ts.
 */
export function createDocumentClient(options: DocumentClientOptions = {}): DocumentClient {
  return observeClient(new DocumentClient(options));
}

// Repositories import the error checks from here, next to the client they come from.
export { isConditionalCheckFailed, isTransientStorageError, TRANSIENT_ERROR_NAMES } from '#shared/data/storage-errors';

/** Whether a TransactWriteItems was cancelled (a condition failed, or a conflict with a concurrent write). */
export const isCancelled = (error: unknown) => error instanceof Error && error.name === 'TransactionCanceledException';

/** The cancellation reason of each item of a cancelled transaction, in the order of its items. */
export const cancellationCodes = (error: unknown) =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);
