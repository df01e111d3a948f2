import { FACTOR_FAILURE_MESSAGES } from '#shared/accounts/second-factor';
import { securityPage } from '#shared/views/security-pages';
import { removalRead, removeAuthenticator } from '#shared/runtime';
import { securityState } from '#shared/pages/security';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/totp/remove — turns two-step sign-in off with a fresh code of the app or a
 * recovery code (removeAuthenticator: throttled like the sign-in's second step, the code spent by
 * the removal), its factors and throttle record read with the session (one BatchGetItem). Done: 303
 * to GET /account/security?done=totp-removed. Refused: the security page with the reason (401, or
 * 429 with Retry-After), its factors as read.
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { ofUser: (userId) => removalRead(userId, Date.now()) }, loginReturn: '/account/security',
}, async ({ form, signedIn, viewer, ofUser }) => {
  const result = await removeAuthenticator(signedIn.user.id, form.code ?? '', Date.now(), ofUser);
  if (result.outcome === 'removed') return redirect('/account/security?done=totp-removed', 303);
  if (result.outcome === 'not-enrolled') return redirect('/account/security', 303);
  const state = await securityState(signedIn.user.id, signedIn.sessionId, result.stored);
  if (result.outcome === 'failed') return securityPage(viewer, { ...state, error: FACTOR_FAILURE_MESSAGES[result.failure], status: 401 });
  const seconds = result.retryAfterSeconds;
  const answer = securityPage(viewer, { ...state, error: `Too many wrong codes. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, status: 429 });
  answer.headers['retry-after'] = String(seconds);
  return answer;
});
