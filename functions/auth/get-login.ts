import { loginPage } from '#shared/views/oauth-pages';
import { redirectOriginOf, safeReturnTo, secure, signedInUser } from '#shared/accounts/session';
import { csrfToken } from '#shared/http/csrf';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';

/** GET /login — the sign-in form; an already signed-in user goes straight on. */
export const handler = pageHandler(async (event) => {
  const returnTo = safeReturnTo(event.queryStringParameters?.return_to);
  if (await signedInUser(event)) return redirect(returnTo);
  const { token, cookies } = csrfToken(event, secure);
  return loginPage({ returnTo, csrf: token, cookies, formTargets: redirectOriginOf(returnTo) });
});
