import { secondFactorPage } from '#shared/views/security-pages';
import { batch, factors, users } from '#shared/runtime';
import { redirectOriginOf, safeReturnTo } from '#shared/pages/session';
import { PENDING_SIGN_IN_COOKIE } from '#shared/pages/second-factor';
import { pageHandler } from '#shared/pages/page-handler';
import { pendingSignInUserId } from '#shared/data/pending-sign-in-repo';
import { readCookie } from '#shared/http/cookies';
import { redirect } from '#shared/http/responses';

/**
 * GET /login/second-factor — the code form of a sign-in whose password was right, naming the account
 * that signs in: one BatchGetItem of the pending sign-in and its user (the address is shown only for
 * a live pending sign-in, never for a cookie that merely names a user). Without a live one, back to
 * the login form; a signed-in browser goes straight on.
 */
export const handler = pageHandler({ session: 'optional' }, async ({ event, signedIn, viewer }) => {
  const returnTo = safeReturnTo(event.queryStringParameters?.return_to);
  if (signedIn) return redirect(returnTo);
  const pending = readCookie(event, PENDING_SIGN_IN_COOKIE);
  const userId = pendingSignInUserId(pending);
  const toLogin = redirect(`/login?return_to=${encodeURIComponent(returnTo)}`);
  if (!userId) return toLogin;
  const [live, profile] = await batch.read([factors.pendingSignInRead(pending, new Date()), users.signInProfileRead(userId)] as const);
  if (!live || !profile) return toLogin;
  return secondFactorPage({ returnTo, csrf: viewer.csrf, cookies: viewer.cookies, formTargets: redirectOriginOf(returnTo), account: profile.user.email });
});
