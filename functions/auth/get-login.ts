import { loginPage } from '#shared/views/oauth-pages';
import { redirectOriginOf, safeReturnTo } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * GET /login — the sign-in form; an already signed-in user goes straight on, unless `again=yes`
 * (a change that asks for a recent sign-in sends the user here to sign in again).
 */
export const handler = pageHandler({ session: 'optional' }, async ({ event, signedIn, viewer }) => {
  const returnTo = safeReturnTo(event.queryStringParameters?.return_to);
  if (signedIn && event.queryStringParameters?.again !== 'yes') return redirect(returnTo);
  const notice = signedIn ? 'For your safety, this change to how you sign in needs a recent sign-in: nothing was changed yet. Sign in again to continue.' : undefined;
  return loginPage({ returnTo, csrf: viewer.csrf, cookies: viewer.cookies, formTargets: redirectOriginOf(returnTo), notice });
});
