// Classification of DynamoDB errors by name only. Kept apart from the client module so that code
// which only maps errors (the HTTP wrappers) does not pull the AWS SDK into functions that never
// touch the table: @aws-sdk/lib-dynamodb is not marked side-effect free, so any import of it stays
// in the bundle and is evaluated at load.

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
