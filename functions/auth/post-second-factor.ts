import { KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_COOKIE_PATH, KNOWN_BROWSER_TTL_SECONDS } from '#shared/accounts/login-throttle';
import { FACTOR_FAILURE_MESSAGES } from '#shared/accounts/second-factor';
import { secondFactorPage } from '#shared/views/security-pages';
import { noticePage } from '#shared/views/account-pages';
import { completeSignIn, sendSignInAlert } from '#shared/runtime';
import { redirectOriginOf, safeReturnTo, secureCookie } from '#shared/pages/session';
import { PENDING_SIGN_IN_COOKIE, PENDING_SIGN_IN_COOKIE_PATH } from '#shared/pages/second-factor';
import { pageHandler } from '#shared/pages/page-handler';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { csrfToken, renewedCsrfCookie } from '#shared/http/csrf';
import { redirect } from '#shared/http/responses';
import { describeBrowser } from '#shared/domain/browser';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';

/**
 * POST /login/second-factor: the code of a sign-in whose password was right (completeSignIn, which
 * says what it costs and how it is throttled). A right code: the session and known-browser cookies,
 * a new CSRF token, the pending sign-in's cookie cleared, 303 to `return_to`. Else the form again
 * with the reason (401, or 429 with Retry-After); no pending sign-in: a page that says to sign in again (400).
 */
export const handler = pageHandler({ form: true, csrf: true }, async ({ event, form }) => {
  const returnTo = safeReturnTo(form.return_to);
  const { token, cookies } = csrfToken(event, secureCookie());
  const again = (error: string, status: number, account?: string) =>
    secondFactorPage({ returnTo, csrf: token, cookies, error, status, formTargets: redirectOriginOf(returnTo), account });

  const result = await completeSignIn({
    pendingSignIn: readCookie(event, PENDING_SIGN_IN_COOKIE), typed: form.code ?? '', browserToken: readCookie(event, KNOWN_BROWSER_COOKIE), now: Date.now(),
    client: { browser: describeBrowser(event.headers['user-agent']), address: event.requestContext.http.sourceIp },
  });
  const clearPending = setCookie(PENDING_SIGN_IN_COOKIE, '', { secure: secureCookie(), maxAgeSeconds: 0, path: PENDING_SIGN_IN_COOKIE_PATH });
  switch (result.outcome) {
    case 'expired':
      return noticePage({ csrf: token, cookies: [...cookies, clearPending] }, 'Sign in again', 'This sign-in has expired or was completed already. Sign in again with your password.', 400, {
        href: `/login?return_to=${encodeURIComponent(returnTo)}`, text: 'Sign in',
      });
    case 'throttled': {
      const seconds = result.retryAfterSeconds;
      const answer = again(`Too many wrong codes. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, 429, result.account);
      answer.headers['retry-after'] = String(seconds);
      return answer;
    }
    case 'failed':
      return again(FACTOR_FAILURE_MESSAGES[result.failure], 401, result.account);
    case 'signed-in':
      if (result.alert) await sendSignInAlert(result.alert);
      return redirect(returnTo, 303, [
        renewedCsrfCookie(secureCookie()),
        clearPending,
        setCookie(SESSION_COOKIE, result.sessionId, { secure: secureCookie(), maxAgeSeconds: SESSION_TTL_SECONDS }),
        setCookie(KNOWN_BROWSER_COOKIE, result.knownBrowserToken, { secure: secureCookie(), maxAgeSeconds: KNOWN_BROWSER_TTL_SECONDS, path: KNOWN_BROWSER_COOKIE_PATH }),
      ]);
  }
});
