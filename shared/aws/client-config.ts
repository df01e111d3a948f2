// Settings shared by every AWS SDK client of the service (DynamoDB, KMS, SES). Kept free of SDK
// imports so that it costs nothing at load.

import { Sha256 } from '#shared/aws/sha256';

/**
 * Network limits of every AWS call. A stalled dependency must fail fast enough that the function
 * answers `503` with `Retry-After` within 3 s — far inside the function's 10 s timeout and API
 * Gateway's 29 s — instead of hanging: at most 2 attempts of at most 1 s each, plus the SDK's short
 * backoff between them (under 50 ms after a timeout, under 1 s after fast throttling answers), so a
 * stalled call fails after about 2.05 s. A healthy DynamoDB, KMS or SES call takes a few
 * milliseconds to tens of them.
 */
export const AWS_CALL_LIMITS = {
  /** Time to open a TCP (and TLS) connection. */
  connectionTimeoutMs: 500,
  /** Time an attempt may take until the response's headers; also the longest silence while its body is read. */
  requestTimeoutMs: 1000,
  /** Attempts per call, the first included (the SDK's default is 3). */
  maxAttempts: 2,
} as const;

/** A hook the local runtime installs to see every client the service creates (nothing sets it in Lambda). */
export type ClientHook = (client: { middlewareStack: unknown }) => void;

const CLIENT_HOOK = Symbol.for('device-user-service.aws-client-hook');

export type AwsCallLimits = { -readonly [K in keyof typeof AWS_CALL_LIMITS]: number };

/**
 * The configuration every service client is created with: the limits above (tools and tests may
 * loosen them), and the SHA-256 whose HMAC keys are KeyObjects (a third of the CPU of signing a
 * request, see shared/aws/sha256.ts).
 */
export function awsClientConfig(overrides: Partial<AwsCallLimits> = {}) {
  const limits = { ...AWS_CALL_LIMITS, ...overrides };
  return {
    maxAttempts: limits.maxAttempts,
    sha256: Sha256,
    // Options of @smithy/node-http-handler, which the SDK builds from this plain object.
    requestHandler: {
      connectionTimeout: limits.connectionTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Without it a late response only logs a warning and the call waits on (node-http-handler 4.x).
      throwOnRequestTimeout: true,
      // The request timer stops when the headers arrive; this idle limit covers a body that then
      // stalls, which would otherwise wait for the SDK's default socket timeout of 300 s.
      socketTimeout: limits.requestTimeoutMs,
    },
  };
}

/**
 * The settings of a client sent to a local stand-in at `endpoint` (DynamoDB Local, the webhook queue's
 * stand-in): any region will do and the credentials are placeholders. Nothing without an endpoint.
 */
export function localEndpointConfig(endpoint: string | undefined, region = 'local') {
  return endpoint === undefined ? {} : { endpoint, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
}

/**
 * Readies a newly created service client: drops the SDK's logger middleware, and hands the client to
 * the hook, if one is installed (the local runtime uses it to record every AWS call per function,
 * which the IAM test checks against the deployed roles).
 *
 * The service gives the SDK no logger, yet its logger middleware filters every call's input and
 * output for sensitive members (a walk of both through their schemas) to hand them to the default
 * logger, which discards them: about 3 % of the token endpoint's CPU per refresh, for nothing.
 */
export function observeClient<T extends { middlewareStack: unknown }>(client: T): T {
  (client.middlewareStack as { remove?(name: string): boolean }).remove?.(SDK_LOGGER_MIDDLEWARE);
  (globalThis as { [CLIENT_HOOK]?: ClientHook })[CLIENT_HOOK]?.(client);
  return client;
}

/** The name the SDK gives its logger middleware (@aws-sdk/core's loggerMiddlewareOptions). */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/** Installs (or, with undefined, removes) the hook that sees every client created from now on. */
export function setClientHook(hook: ClientHook | undefined): void {
  (globalThis as { [CLIENT_HOOK]?: ClientHook })[CLIENT_HOOK] = hook;
}
