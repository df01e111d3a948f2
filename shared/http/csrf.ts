import { createHmac } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomToken, safeEqual } from '#shared/secrets';
import { AppError } from '#shared/errors';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';

const CSRF_COOKIE = 'csrf';

// The CSRF token of a form. A browser with a session cookie gets a token derived from it: an HMAC
// keyed with the cookie's value (its 256-bit secret), which only a holder of that HttpOnly cookie
// can compute, and which changes with every sign-in. So a token handed out, planted or read before
// a sign-in is worth nothing after it, and a token read from one session's page is worthless for
// another's. A browser without one (the login, sign-up and reset pages, the second step) gets a
// plain double-submit token: the same random value in an HttpOnly SameSite cookie and in the field.

/** The token of a session's forms: HMAC-SHA-256 of a fixed label, keyed with the session cookie's value. */
function sessionBound(sessionCookie: string): string {
  return createHmac('sha256', sessionCookie).update('csrf-token/v1').digest('base64url');
}

/**
 * The token the forms of a request with these cookies (each `name=value`, as payload 2.0 gives
 * them) must carry: derived from the session cookie when there is one, else the CSRF cookie's
 * value (undefined when that is missing or too short to be ours). What the pages print, and what
 * tools that build requests (the benchmark, `npm run invoke`) put in their forms.
 */
export function formCsrfToken(cookies: readonly string[] | undefined): string | undefined {
  return expectedToken({ cookies: [...(cookies ?? [])] } as APIGatewayProxyEventV2);
}

/** formCsrfToken of the request's cookies. */
function expectedToken(event: APIGatewayProxyEventV2): string | undefined {
  const session = readCookie(event, SESSION_COOKIE);
  if (session) return sessionBound(session);
  const doubleSubmit = readCookie(event, CSRF_COOKIE);
  return doubleSubmit && doubleSubmit.length >= 32 ? doubleSubmit : undefined;
}

/**
 * The CSRF token for the forms of the page that answers `event` (see formCsrfToken) and, when it
 * needs a double-submit cookie it has not got, the cookie to set.
 */
export function csrfToken(event: APIGatewayProxyEventV2, secure: boolean): { token: string; cookies: string[] } {
  const existing = expectedToken(event);
  if (existing) return { token: existing, cookies: [] };
  const token = randomToken();
  return { token, cookies: [setCookie(CSRF_COOKIE, token, { secure })] };
}

/**
 * A new double-submit CSRF cookie: a sign-in renews it with the session, so the token of the
 * session-less pages after a sign-out is not the one handed out before the sign-in either.
 */
export function renewedCsrfCookie(secure: boolean): string {
  return setCookie(CSRF_COOKIE, randomToken(), { secure });
}

export class CsrfError extends AppError {
  constructor() {
    super('access_denied', 'This form has expired or was not sent from our page. Go back, reload the page and try again.');
  }
}

/**
 * Refuses a form whose CSRF field is not its cookies' token (formCsrfToken): with a session cookie,
 * the one derived from it (a double-submit value, even sent as both cookie and field, is refused);
 * without, the CSRF cookie's value. Compared in constant time.
 */
export function checkCsrf(event: APIGatewayProxyEventV2, form: Record<string, string>): void {
  const expected = expectedToken(event);
  if (!expected || !form.csrf || !safeEqual(expected, form.csrf)) throw new CsrfError();
}
