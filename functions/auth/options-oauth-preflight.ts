import { preflightHeaders } from '#shared/oauth/cors';
import { publicHandler } from '#shared/http/http';

/**
 * OPTIONS /oauth/token and OPTIONS /oauth/revoke — the CORS preflights of browser applications
 * (docs/api.md#browsers-and-cors): 204 allowing a POST with a form's Content-Type from any origin,
 * without credentials. It reads nothing: a preflight names no client, and grants nothing a plain
 * form post could not do; whether the POST's answer may be read is decided by that answer, for the
 * client that authenticated (shared/oauth/cors.ts).
 */
export const handler = publicHandler(async (event) => ({ statusCode: 204, headers: preflightHeaders(event.headers) }));
