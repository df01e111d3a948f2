import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { issuer, sessions, users } from '#shared/auth/runtime';
import type { User } from '#shared/domain/user';
import { csrfToken, readCookie, redirect, secureCookies, SESSION_COOKIE } from '#shared/http/html';
import type { HttpResult } from '#shared/http/responses';

/** Whether this deployment's cookies carry Secure (all but plain-http localhost). */
export const secure = secureCookies(issuer);

/** The signed-in user of a browser request, if its session cookie names a live session. */
export async function signedInUser(event: APIGatewayProxyEventV2): Promise<{ user: User; sessionId: string } | undefined> {
  const sessionId = readCookie(event, SESSION_COOKIE);
  if (!sessionId) return undefined;
  const session = await sessions.getSession(sessionId);
  const user = session && (await users.getUserById(session.userId));
  return user ? { user, sessionId } : undefined;
}

/** Sends the browser to the login page, to come back to `returnTo` afterwards. */
export function loginRedirect(returnTo: string, status: 302 | 303 = 302): HttpResult {
  return redirect(`/login?return_to=${encodeURIComponent(returnTo)}`, status);
}

/**
 * A local path to return to after login. Only printable ASCII is accepted (browsers drop tabs and
 * newlines, which would turn `/\t/evil.example` into `//evil.example`), and the value must resolve
 * to this host; anything else becomes the account page.
 */
export function safeReturnTo(value: string | undefined): string {
  const fallback = '/account';
  if (!value || !/^\/[\x21-\x7e]*$/.test(value) || /^\/[/\\]/.test(value)) return fallback;
  const base = 'http://self.invalid';
  const url = new URL(value, base);
  return url.origin === base ? `${url.pathname}${url.search}` : fallback;
}

/** The origin a return path will finally redirect to, for CSP form-action (an authorize request's redirect_uri). */
export function redirectOriginOf(returnTo: string): string[] {
  try {
    const target = new URL(returnTo, 'http://self').searchParams.get('redirect_uri');
    return target ? [new URL(target).origin] : [];
  } catch {
    return [];
  }
}

/** The signed-in user (if any) and what every page needs: CSRF token and the cookie that carries it. */
export async function pageContext(event: APIGatewayProxyEventV2) {
  const signedIn = await signedInUser(event);
  const { token, cookies } = csrfToken(event, secure);
  return { signedIn, viewer: { email: signedIn?.user.email, csrf: token, cookies } };
}
