import { outcomePath } from '#shared/views/account-pages';
import { sendConfirmation } from '#shared/runtime';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';

/** POST /confirm-email/resend — a new confirmation link for the signed-in user; then 303 to GET /confirm-email?done=resent. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn } = await pageContext(event);
  if (!signedIn) return loginRedirect('/account', 303);
  if (!signedIn.user.email_confirmed) await sendConfirmation(signedIn.user);
  return redirect(outcomePath('/confirm-email', 'resent'), 303);
});
