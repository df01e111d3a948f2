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
  | 'conflict';

/**
 * An error meant for the client: its status, code and description become the response.
 * Anything that is not an AppError becomes a generic 500 whose details stay in the logs.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    description: string,
    readonly headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(description, options);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(description: string) {
    super(400, 'invalid_request', description);
  }
}

export class UnauthorizedError extends AppError {
  constructor(description: string) {
    super(401, 'invalid_token', description, { 'www-authenticate': `Bearer error="invalid_token"` });
  }
}

export class NotFoundError extends AppError {
  constructor(description = 'The requested resource does not exist.') {
    super(404, 'not_found', description);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: readonly string[]) {
    super(405, 'method_not_allowed', `This resource supports only ${allowed.join(', ')}.`, {
      allow: allowed.join(', '),
    });
  }
}

export class ConflictError extends AppError {
  constructor(description: string) {
    super(409, 'conflict', description);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, 'invalid_request', `The request body is larger than ${limitBytes} bytes.`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super(415, 'invalid_request', `The request body must be sent with Content-Type: ${expected}.`);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(cause?: unknown) {
    super(503, 'temporarily_unavailable', 'The service is temporarily unavailable; retry later.', {
      'retry-after': '1',
    }, { cause });
  }
}

/** Token endpoint: unknown client or wrong secret (RFC 6749 §5.2). */
export class InvalidClientError extends AppError {
  constructor(usedBasic: boolean) {
    super(401, 'invalid_client', 'Client authentication failed.', usedBasic ? { 'www-authenticate': 'Basic realm="oauth"' } : {});
  }
}

/** Token endpoint: the grant (code, refresh token) is invalid, expired, used or not this client's. */
export class InvalidGrantError extends AppError {
  constructor(description: string) {
    super(400, 'invalid_grant', description);
  }
}

export class InvalidScopeError extends AppError {
  constructor(description: string) {
    super(400, 'invalid_scope', description);
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
