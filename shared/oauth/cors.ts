import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { isPublicClient, isRegisteredOrigin, type Client } from '#shared/domain/client';
import { toAppError } from '#shared/http/http';
import type { HttpResult } from '#shared/http/responses';

// CORS of the token and revocation endpoints, for browser applications (public clients whose pages
// call them with fetch). API Gateway's CORS is one static setting per API, and the origins allowed
// here are each client's own, so the functions answer it themselves and the auth API has no CORS
// configuration (shared/routes.ts API_CORS):
// - a preflight (`OPTIONS /oauth/token`, `OPTIONS /oauth/revoke`, functions/auth/options-oauth-preflight.ts)
//   cannot know the client (it has no body) and grants nothing: it lets any origin send a POST with
//   the one header browser applications need beyond the safelisted ones, which any page could send
//   anyway as a plain form post; the answer stays unreadable unless the POST's own answer allows it;
// - the POST's answer carries `Access-Control-Allow-Origin: <origin>` only when the request names the
//   origin of one of the registered redirect URIs of the public client it names, once that client is
//   known (read), refusals of its authentication included; never for an unknown client, never
//   `Access-Control-Allow-Credentials` (no cookie is read there), and always `Vary: Origin`.

/** What a browser application's fetch may send beyond the CORS-safelisted headers: a form's Content-Type with any parameters. */
export const PREFLIGHT_ALLOWED_HEADERS = 'content-type';
/** How long a browser may keep a preflight's answer (Chromium keeps it at most 2 hours). */
export const PREFLIGHT_MAX_AGE_SECONDS = 3600;
/** Response headers a browser application's script may read besides the safelisted ones: the wait of a 503. */
export const EXPOSED_HEADERS = 'retry-after';

/**
 * The answer to `OPTIONS /oauth/token` and `OPTIONS /oauth/revoke`: `Allow` for any OPTIONS
 * request (RFC 9110 §9.3.7), and for a CORS preflight (it names its Origin and
 * Access-Control-Request-Method) the POST it may send, for any origin, without credentials.
 */
export function preflightHeaders(headers: APIGatewayProxyEventV2['headers']): Record<string, string> {
  const allow = { allow: 'POST, OPTIONS' };
  if (!headers.origin || !headers['access-control-request-method']) return allow;
  return {
    ...allow,
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': PREFLIGHT_ALLOWED_HEADERS,
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
  };
}

/**
 * The origin a POST answer of the token or revocation endpoint allows: `origin` itself when the
 * client is public and `origin` is the origin of one of its registered redirect URIs (exactly; a
 * loopback one with any port, as redirect URIs match: isRegisteredOrigin); otherwise none (a
 * confidential client's answers are for its server, and an opaque `null` origin is never one of a client's).
 */
export function allowedOrigin(client: Client | undefined, origin: string | undefined): string | undefined {
  if (!client || !origin || !isPublicClient(client)) return undefined;
  return isRegisteredOrigin(client, origin) ? origin : undefined;
}

/** The CORS headers of a POST answer for the client the request named (undefined: none known). */
export function corsHeaders(client: Client | undefined, origin: string | undefined): Record<string, string> {
  const allowed = allowedOrigin(client, origin);
  if (allowed === undefined) return { vary: 'origin' };
  return { vary: 'origin', 'access-control-allow-origin': allowed, 'access-control-expose-headers': EXPOSED_HEADERS };
}

/**
 * Runs one request of the token or revocation endpoint and puts its client's CORS headers on the
 * answer, errors included (a browser application reads an invalid_grant as well as a token, and
 * the invalid_client of a secret it should not send; a request naming no known client gets none).
 * `run` is given the hook that client authentication calls with the client it read
 * (ClientCredentials.identified).
 */
export async function withClientCors(
  event: APIGatewayProxyEventV2, run: (identified: (client: Client) => void) => Promise<HttpResult>,
): Promise<HttpResult> {
  let client: Client | undefined;
  const origin = event.headers.origin;
  try {
    const result = await run((known) => {
      client = known;
    });
    return { ...result, headers: { ...result.headers, ...corsHeaders(client, origin) } };
  } catch (error) {
    // The answer the wrapper will give (shared/http/http.ts), with the headers added.
    const answer = toAppError(error);
    Object.assign(answer.headers, corsHeaders(client, origin));
    throw answer;
  }
}
