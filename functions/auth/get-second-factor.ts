import { secondFactorPage } from '#shared/views/security-pages';
import { redirectOriginOf, safeReturnTo } from '#shared/pages/session';
import { PENDING_SIGN_IN_COOKIE } from '#shared/pages/second-factor';
import { pageHandler } from '#shared/pages/page-handler';
import { pendingSignInUserId } from '#shared/data/factor-repo';
import { readCookie } from '#shared/http/cookies';
import { redirect } from '#shared/http/responses';

/**
 * GET /login/second-factor — the code form of a sign-in whose password was right. Without a pending
 * sign-in's cookie, back to the login form (the pending sign-in itself is read when the code comes);
 * a signed-in browser goes straight on.
 */
export const handler = pageHandler({ session: 'optional' }, async ({ event, signedIn, viewer }) => {
  const returnTo = safeReturnTo(event.queryStringParameters?.return_to);
  if (signedIn) return redirect(returnTo);
  if (!pendingSignInUserId(readCookie(event, PENDING_SIGN_IN_COOKIE))) return redirect(`/login?return_to=${encodeURIComponent(returnTo)}`);
  return secondFactorPage({ returnTo, csrf: viewer.csrf, cookies: viewer.cookies, formTargets: redirectOriginOf(returnTo) });
});
