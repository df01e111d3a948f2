import { KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_COOKIE_PATH, KNOWN_BROWSER_TTL_SECONDS } from '#shared/accounts/login-throttle';
import { loginPage } from '#shared/views/oauth-pages';
import { attemptLogin, sendSignInAlert } from '#shared/runtime';
import { redirectOriginOf, safeReturnTo, secureCookie } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { normalizeEmail } from '#shared/domain/user';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { csrfToken, renewedCsrfCookie } from '#shared/http/csrf';
import { PENDING_SIGN_IN_COOKIE, PENDING_SIGN_IN_COOKIE_PATH, secondFactorPath } from '#shared/pages/second-factor';
import { PENDING_SIGN_IN_SECONDS } from '#shared/data/pending-sign-in-repo';
import { redirect } from '#shared/http/responses';
import { describeBrowser } from '#shared/domain/browser';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';

/**
 * POST /login: the attempt, throttled (attemptLogin, which says what it costs), then the session
 * and known-browser cookies, a new CSRF token, and 303 to `return_to`; else the form again with the
 * reason (401, or 429 with Retry-After). A wrong password and an unknown account get the same
 * answer. An account with a second factor gets the pending sign-in's cookie instead and goes on to
 * GET /login/second-factor, `return_to` kept. The session is not read: the page does not depend on one.
 */
export const handler = pageHandler({ form: true, csrf: true }, async ({ event, form }) => {
  const returnTo = safeReturnTo(form.return_to);
  const email = normalizeEmail(form.email ?? '');
  const { token, cookies } = csrfToken(event, secureCookie());
  const again = (error: string, status: number) =>
    loginPage({ returnTo, csrf: token, cookies, error, email, status, formTargets: redirectOriginOf(returnTo) });

  const login = await attemptLogin({
    email, password: form.password ?? '', address: event.requestContext.http.sourceIp, browser: describeBrowser(event.headers['user-agent']), browserToken: readCookie(event, KNOWN_BROWSER_COOKIE), now: Date.now(),
  });
  if (login.outcome === 'throttled') {
    const seconds = login.retryAfterSeconds;
    const result = again(`Too many failed attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, 429);
    result.headers['retry-after'] = String(seconds);
    return result;
  }
  if (login.outcome === 'failed') return again('Incorrect e-mail address or password.', 401);
  if (login.outcome === 'second-factor') {
    return redirect(secondFactorPath(returnTo), 303, [
      setCookie(PENDING_SIGN_IN_COOKIE, login.pendingSignIn, { secure: secureCookie(), maxAgeSeconds: PENDING_SIGN_IN_SECONDS, path: PENDING_SIGN_IN_COOKIE_PATH }),
    ]);
  }
  if (login.alert) await sendSignInAlert(login.alert);
  // An account whose deletion did not finish signs in only to finish it.
  return redirect(login.deleting ? '/account/delete' : returnTo, 303, [
    renewedCsrfCookie(secureCookie()),
    setCookie(SESSION_COOKIE, login.sessionId, { secure: secureCookie(), maxAgeSeconds: SESSION_TTL_SECONDS }),
    setCookie(KNOWN_BROWSER_COOKIE, login.knownBrowserToken, { secure: secureCookie(), maxAgeSeconds: KNOWN_BROWSER_TTL_SECONDS, path: KNOWN_BROWSER_COOKIE_PATH }),
  ]);
});
