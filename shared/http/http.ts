import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyEventV2WithJWTAuthorizer, Context } from 'aws-lambda';
import { isTransientStorageError } from '#shared/data/storage-errors';
import { ValidationError } from '#shared/domain/errors';
import {
  AppError, BadRequestError, DependencyUnavailableError, PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError,
  ServerError, UnsupportedMediaTypeError,
} from '#shared/errors';
import { logger } from '#shared/log';
import { json, type HttpResult } from '#shared/http/responses';
import { API_SECURITY_HEADERS, securityHeaders } from '#shared/http/security-headers';

/** Largest request body the resource API accepts. */
export const MAX_BODY_BYTES = 16 * 1024;

/** The verified access-token claims the gateway's JWT authorizer passes on. */
export interface Claims {
  /** The user the token acts for. */
  sub: string;
  clientId: string;
  scopes: string[];
}

export interface ApiRequest<TBody> {
  event: APIGatewayProxyEventV2;
  claims: Claims;
  body: TBody;
  path: Record<string, string>;
}

export interface ApiOptions {
  /** 'json': the request must carry a JSON body (size, media type and syntax are checked here). */
  body?: 'json';
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/**
 * Wraps a resource-API handler: reads the verified claims (401 if the gateway passed none),
 * parses and guards the body, maps every thrown error to the JSON error envelope, adds the
 * security headers, and logs one line per request. The handler only does its own work.
 */
export function apiHandler<TBody = undefined>(
  handler: (request: ApiRequest<TBody>) => Promise<HttpResult>,
  options: ApiOptions = {},
): Handler {
  const chain = middy<APIGatewayProxyEventV2, HttpResult>()
    .use(requestLog())
    .use(securityHeaders(API_SECURITY_HEADERS))
    .use(errorEnvelope());
  if (options.body === 'json') {
    chain.use(jsonBodyGuard()).use(httpJsonBodyParser({ disableContentTypeCheck: true }) as MiddlewareObj);
  }
  return chain.handler(async (event) =>
    handler({
      event,
      claims: readClaims(event),
      body: event.body as TBody,
      path: (event.pathParameters ?? {}) as Record<string, string>,
    }),
  ) as unknown as Handler;
}

/** Wraps a handler that needs no token (fallbacks, discovery). */
export function publicHandler(
  handler: (event: APIGatewayProxyEventV2) => Promise<HttpResult>,
  headers: Readonly<Record<string, string>> = API_SECURITY_HEADERS,
): Handler {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use(requestLog())
    .use(securityHeaders(headers))
    .use(errorEnvelope())
    .handler(handler) as unknown as Handler;
}

function readClaims(event: APIGatewayProxyEventV2): Claims {
  const claims = (event as APIGatewayProxyEventV2WithJWTAuthorizer).requestContext.authorizer?.jwt?.claims;
  const sub = claims?.sub;
  if (typeof sub !== 'string' || sub === '') {
    // Only reachable if a route lost its authorizer: refuse rather than act for nobody.
    throw new UnauthorizedError('The request carries no verified access token.');
  }
  return {
    sub,
    clientId: String(claims?.client_id ?? ''),
    scopes: String(claims?.scope ?? '').split(' ').filter(Boolean),
  };
}

function jsonBodyGuard(): MiddlewareObj<APIGatewayProxyEventV2> {
  return {
    before: ({ event }) => {
      const body = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(body, 'base64').length : Buffer.byteLength(body);
      if (bytes > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
      if (!/^application\/json\s*(;|$)/i.test(event.headers['content-type'] ?? '')) {
        throw new UnsupportedMediaTypeError('application/json');
      }
      if (bytes === 0) throw new BadRequestError('The request body must be a JSON object.');
    },
  };
}

/** Turns any thrown error into the JSON envelope; only AppErrors say what went wrong. */
export function errorEnvelope(): MiddlewareObj {
  return {
    onError: (request) => {
      const error = toAppError(request.error);
      request.response = json(error.status, { error: error.code, error_description: error.message }, error.headers);
    },
  };
}

/** Maps anything thrown to the AppError the client sees; unexpected errors are logged with their cause. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ValidationError) return new BadRequestError(error.message);
  // The JSON body parser's errors (malformed JSON, forbidden keys) are client mistakes.
  const status = (error as { statusCode?: number } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new BadRequestError('The request body is not valid JSON, or it contains a forbidden member such as __proto__.');
  }
  if (isTransientStorageError(error)) {
    logger.warn('Storage unavailable', { error: error as Error });
    return new ServiceUnavailableError(error);
  }
  if (error instanceof DependencyUnavailableError) {
    // A signer's SigningUnavailableError (shared/keys/signer.ts): "Signing unavailable".
    logger.warn(`${error.dependency} unavailable`, { error });
    return new ServiceUnavailableError(error);
  }
  logger.error('Unhandled error', { error: error as Error });
  return new ServerError();
}

/** Logs one structured line per request: route, status, latency, request id. Nothing else. */
export function requestLog(): MiddlewareObj<APIGatewayProxyEventV2, HttpResult> {
  // Keyed by event: one handler instance may serve overlapping requests (local gateway).
  const started = new WeakMap<object, number>();
  const log = (request: { event: APIGatewayProxyEventV2; response?: HttpResult | null }) => {
    logger.info('request', {
      route: request.event.routeKey,
      status: request.response?.statusCode,
      latencyMs: Math.round((performance.now() - (started.get(request.event) ?? performance.now())) * 100) / 100,
      requestId: request.event.requestContext?.requestId,
    });
  };
  return {
    before: (request) => {
      started.set(request.event, performance.now());
    },
    after: log,
    onError: log,
  };
}
