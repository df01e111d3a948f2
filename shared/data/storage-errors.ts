// Classification of AWS errors (DynamoDB, KMS, SES) by name, code and status only. Kept apart from the client module so that code
// which only maps errors (the HTTP wrappers) does not pull the DynamoDB client (the SDK's signer,
// HTTP handler and credentials chain) into functions that never touch the table.

/**
 * Names of AWS errors that mean "try again later" rather than "bug": throttling, a service's own
 * outage, and the SDK's timeouts (`TimeoutError` is what a connection, request or socket timeout of
 * AWS_CALL_LIMITS ends in, and what node-http-handler renames ECONNRESET, EPIPE and ETIMEDOUT to).
 */
export const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'TransactionInProgressException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/** Node.js network error codes of a connection that failed, was refused, reset or timed out. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
]);

/**
 * True for a failure of DynamoDB, KMS or SES that the caller should retry later: throttling, an
 * outage (any answer with a 5xx status, or 429), or the network (timeouts, resets, refusals),
 * also when it is the cause of another error. A 4xx answer (a bug, a missing key) is not.
 */
export function isTransientStorageError(error: unknown): boolean {
  for (let depth = 0; error instanceof Error && depth < 5; depth++, error = error.cause) {
    const { code, $metadata } = error as { code?: unknown; $metadata?: { httpStatusCode?: number } };
    const status = $metadata?.httpStatusCode ?? 0;
    if (TRANSIENT_ERROR_NAMES.has(error.name) || (typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code))
      || status >= 500 || status === 429) {
      return true;
    }
  }
  return false;
}

/** True when a write's ConditionExpression failed. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
