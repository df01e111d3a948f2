import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What every repository is created with, so the same code runs in tests and in Lambda. */
export interface RepoDeps {
  doc: DynamoDBDocumentClient;
  table: string;
}

export interface ClientOptions {
  /** DynamoDB Local's URL; absent in AWS. */
  endpoint?: string;
}

/** A document client that drops undefined members and keeps numbers as numbers. */
export function createDocumentClient({ endpoint }: ClientOptions = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient(
    endpoint === undefined
      ? {}
      : {
          endpoint,
          region: process.env.AWS_REGION ?? 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        },
  );
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** Names of DynamoDB errors that mean "try again later" rather than "bug". */
export const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);

/** True for a storage failure the caller should retry (throttling, outage, network). */
export function isTransientStorageError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  return TRANSIENT_ERROR_NAMES.has(error.name) || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT';
}

/** True when a write's ConditionExpression failed. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
