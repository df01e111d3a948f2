import { KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_COOKIE_PATH, KNOWN_BROWSER_TTL_SECONDS } from '#shared/accounts/login-throttle';
import { PASSKEY_REFUSALS } from '#shared/accounts/passkeys';
import { loginPage } from '#shared/views/oauth-pages';
import { secondFactorPage } from '#shared/views/security-pages';
import { pendingSignInUserId } from '#shared/data/pending-sign-in-repo';
import { relyingParty, sendSignInAlert, signInWithPasskey } from '#shared/runtime';
import { redirectOriginOf, safeReturnTo, secureCookie } from '#shared/pages/session';
import { PENDING_SIGN_IN_COOKIE, PENDING_SIGN_IN_COOKIE_PATH } from '#shared/pages/second-factor';
import { pageHandler } from '#shared/pages/page-handler';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { csrfToken, renewedCsrfCookie } from '#shared/http/csrf';
import { redirect } from '#shared/http/responses';
import { describeBrowser } from '#shared/domain/browser';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';

/**
 * POST /login/passkey — a sign-in with a passkey (the browser's answer in `response`, made by the
 * page's script): signInWithPasskey, which says what it checks, costs and counts. Signed in: the
 * session and known-browser cookies, a new CSRF token, any pending sign-in's cookie cleared (a
 * passkey is the second step too), 303 to `return_to`. Sent from the second step's page
 * (`second_step=yes`) while a sign-in waits for it, the passkey must be of that sign-in's account:
 * another's is refused, no session started, the sign-in still waiting. Refused: the page it came
 * from with the reason (401, or 429 with Retry-After); sent without an answer: 400, nothing read.
 */
export const handler = pageHandler({ form: true, csrf: true }, async ({ event, form }) => {
  const returnTo = safeReturnTo(form.return_to);
  const { token, cookies } = csrfToken(event, secureCookie());
  const pendingUserId = form.second_step === 'yes' ? pendingSignInUserId(readCookie(event, PENDING_SIGN_IN_COOKIE)) : undefined;
  const again = (error: string, status: number) => (pendingUserId ? secondFactorPage : loginPage)({ returnTo, csrf: token, cookies, error, status, formTargets: redirectOriginOf(returnTo) });
  // The form sent without the page script's answer (no JavaScript, no WebAuthn) is no attempt: nothing is read or counted.
  if (!form.response) return again('Signing in with a passkey needs a browser that supports passkeys, with JavaScript on.', 400);
  const result = await signInWithPasskey(relyingParty(), {
    response: form.response ?? '', address: event.requestContext.http.sourceIp, browserToken: readCookie(event, KNOWN_BROWSER_COOKIE), now: Date.now(),
    browser: describeBrowser(event.headers['user-agent']), pendingUserId,
  });
  if (result.outcome === 'throttled') {
    const seconds = result.retryAfterSeconds;
    const answer = again(`Too many failed attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, 429);
    answer.headers['retry-after'] = String(seconds);
    return answer;
  }
  if (result.outcome === 'refused') return again(PASSKEY_REFUSALS[result.refusal], 401);
  if (result.alert) await sendSignInAlert(result.alert);
  return redirect(returnTo, 303, [
    renewedCsrfCookie(secureCookie()),
    setCookie(PENDING_SIGN_IN_COOKIE, '', { secure: secureCookie(), maxAgeSeconds: 0, path: PENDING_SIGN_IN_COOKIE_PATH }),
    setCookie(SESSION_COOKIE, result.sessionId, { secure: secureCookie(), maxAgeSeconds: SESSION_TTL_SECONDS }),
    setCookie(KNOWN_BROWSER_COOKIE, result.knownBrowserToken, { secure: secureCookie(), maxAgeSeconds: KNOWN_BROWSER_TTL_SECONDS, path: KNOWN_BROWSER_COOKIE_PATH }),
  ]);
});
