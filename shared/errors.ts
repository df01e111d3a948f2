/** Stable error codes: the `error` member of every JSON error body. */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_token'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unauthorized_client'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'conflict';

/**
 * An error meant for the client: its code and description become the response. Whoever throws it
 * names what went wrong, never an HTTP status: `status` is read from the one mapping below
 * (httpStatusOf). Anything that is not an AppError becomes a generic 500 whose details stay in the logs.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    description: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(description, options);
    this.name = new.target.name;
  }

  /** The HTTP status it is answered with (httpStatusOf). */
  get status(): number {
    return httpStatusOf(this);
  }
}

export class BadRequestError extends AppError {
  constructor(description: string) {
    super('invalid_request', description);
  }
}

export class UnauthorizedError extends AppError {
  constructor(description: string) {
    super('invalid_token', description, { 'www-authenticate': `Bearer error="invalid_token"` });
  }
}

export class NotFoundError extends AppError {
  constructor(description = 'The requested resource does not exist.') {
    super('not_found', description);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: readonly string[]) {
    super('method_not_allowed', `This resource supports only ${allowed.join(', ')}.`, {
      allow: allowed.join(', '),
    });
  }
}

export class ConflictError extends AppError {
  constructor(description: string) {
    super('conflict', description);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super('invalid_request', `The request body is larger than ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super('invalid_request', `The request body must be sent with Content-Type: ${expected}.`);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(cause?: unknown) {
    super('temporarily_unavailable', 'The service is temporarily unavailable; retry later.', {
      'retry-after': '1',
    }, { cause });
  }
}

/** What the client sees of an unexpected error: its details stay in the logs. */
export class ServerError extends AppError {
  constructor() {
    super('server_error', 'An unexpected error occurred.');
  }
}

/**
 * Token and revocation endpoints: unknown client, wrong secret, or no usable credentials (RFC 6749
 * §5.2). A 401 always carries a challenge (RFC 9110 §15.5.2), also when the client sent its
 * credentials in the body: Basic, a method every client of these endpoints may use.
 */
export class InvalidClientError extends AppError {
  constructor() {
    super('invalid_client', 'Client authentication failed.', { 'www-authenticate': 'Basic realm="oauth"' });
  }
}

/** Token endpoint: the grant (code, refresh token) is invalid, expired, used or not this client's. */
export class InvalidGrantError extends AppError {
  constructor(description: string) {
    super('invalid_grant', description);
  }
}

export class InvalidScopeError extends AppError {
  constructor(description: string) {
    super('invalid_scope', description);
  }
}

/** The application may not use this grant (RFC 6749 §5.2): the device flow is not enabled for it. */
export class UnauthorizedClientError extends AppError {
  constructor(description: string) {
    super('unauthorized_client', description);
  }
}

/**
 * A device polling the token endpoint is answered (RFC 8628 §3.5): the user has not decided yet
 * (`authorization_pending`), the device polls faster than its interval (`slow_down`), the device code
 * expired (`expired_token`), or the user denied the request (`access_denied`). Every one is a 400,
 * as every token error is (RFC 6749 §5.2).
 */
export class DeviceGrantError extends AppError {
  constructor(code: 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied', description: string) {
    super(code, description);
  }
}

/**
 * A service this one depends on cannot answer right now (throttled, briefly unavailable,
 * unreachable): the request may be retried as is. Not an AppError: the code that calls the
 * dependency throws a subclass of its own (SigningUnavailableError), and the HTTP layer answers any
 * of them 503 `temporarily_unavailable` with Retry-After, logging `<dependency> unavailable`.
 */
export abstract class DependencyUnavailableError extends Error {
  /** What is unavailable, as the warning names it (an accessor: the logged error gains no member). */
  abstract get dependency(): string;
}

// The one place where an error becomes an HTTP status: by its code, unless its class says more.

/** The status of each error code. */
const STATUS_OF_CODE: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_token: 401,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  temporarily_unavailable: 503,
  server_error: 500,
  // RFC 6749 §5.2: 401 when the client authenticated (or tried to) and failed.
  invalid_client: 401,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  // A form refused (CSRF): the user may not do this from there. (At the token endpoint, a device
  // authorization the user denied is 400: DeviceGrantError.)
  access_denied: 403,
  unauthorized_client: 400,
  // RFC 8628 §3.5: the device flow's polling answers.
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  conflict: 409,
};

/** The HTTP status an error is answered with: a body refused for its size or its type is an invalid request with a status of its own. */
export function httpStatusOf(error: AppError): number {
  if (error instanceof PayloadTooLargeError) return 413;
  if (error instanceof UnsupportedMediaTypeError) return 415;
  if (error instanceof DeviceGrantError) return 400;
  return STATUS_OF_CODE[error.code];
}
