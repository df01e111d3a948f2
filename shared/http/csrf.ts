import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomToken, safeEqual } from '#shared/secrets';
import { AppError } from '#shared/errors';
import { readCookie, setCookie } from '#shared/http/cookies';

const CSRF_COOKIE = 'csrf';

/**
 * Double-submit CSRF token: the same random value in an HttpOnly SameSite cookie and in a hidden
 * form field. Returns the token and, when it is new, the cookie to set.
 */
export function csrfToken(event: APIGatewayProxyEventV2, secure: boolean): { token: string; cookies: string[] } {
  const existing = readCookie(event, CSRF_COOKIE);
  if (existing && existing.length >= 32) return { token: existing, cookies: [] };
  const token = randomToken();
  return { token, cookies: [setCookie(CSRF_COOKIE, token, { secure })] };
}

/**
 * A new CSRF token and the cookie that carries it: a sign-in renews it with the session, so a token
 * a page handed out before the sign-in (or planted by someone who could set a cookie) is worth
 * nothing after it.
 */
export function renewedCsrfCookie(secure: boolean): string {
  return setCookie(CSRF_COOKIE, randomToken(), { secure });
}

export class CsrfError extends AppError {
  constructor() {
    super('access_denied', 'This form has expired or was not sent from our page. Go back, reload the page and try again.');
  }
}

/** Refuses a form whose CSRF field does not match its cookie. */
export function checkCsrf(event: APIGatewayProxyEventV2, form: Record<string, string>): void {
  const cookie = readCookie(event, CSRF_COOKIE);
  if (!cookie || !form.csrf || !safeEqual(cookie, form.csrf)) throw new CsrfError();
}
