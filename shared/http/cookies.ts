import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * The value of a request cookie. One whose value is not valid percent-encoding (`%E0%A4%A`) was not
 * set by us: it is ignored as absent, as if the browser had not sent it.
 */
export function readCookie(event: APIGatewayProxyEventV2, name: string): string | undefined {
  for (const cookie of event.cookies ?? []) {
    const eq = cookie.indexOf('=');
    if (eq > 0 && cookie.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(cookie.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/ (or the path given), and Secure unless the host
 * is plain-http localhost (browsers do not keep Secure cookies there).
 */
export function setCookie(name: string, value: string, options: { maxAgeSeconds?: number; secure: boolean; path?: string }): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path ?? '/'}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
    ...(options.maxAgeSeconds !== undefined ? [`Max-Age=${options.maxAgeSeconds}`] : []),
  ].join('; ');
}

export const SESSION_COOKIE = 'session';

/** True when cookies may be marked Secure for this issuer (everything but plain-http localhost). */
export function secureCookies(issuer: string): boolean {
  return !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(issuer);
}
