import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';

/** Headers for JSON responses: nothing in them may be rendered, framed or cached. */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * Adds a fixed set of security headers to every response, errors included. We keep our own
 * short list instead of @middy/http-security-headers because its CSP is merged with browser
 * defaults (reporting, trusted types) that do not fit a JSON API, and we want the exact set tested.
 */
export function securityHeaders(headers: Readonly<Record<string, string>>): MiddlewareObj {
  const apply = (request: { response: unknown }) => {
    const response = request.response as Exclude<APIGatewayProxyResultV2, string> | undefined;
    if (!response) return;
    response.headers = { ...headers, ...response.headers };
  };
  return { after: apply, onError: apply };
}

/** Token endpoint responses carry credentials: never cached (RFC 6749 §5.1). */
export const TOKEN_ENDPOINT_HEADERS: Readonly<Record<string, string>> = {
  ...API_SECURITY_HEADERS,
  pragma: 'no-cache',
};
