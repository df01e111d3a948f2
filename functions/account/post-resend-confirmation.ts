import { outcomePath } from '#shared/views/account-pages';
import { sendConfirmation } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/** POST /confirm-email/resend — a new confirmation link for the signed-in user; then 303 to GET /confirm-email?done=resent. */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account' }, async ({ signedIn }) => {
  if (!signedIn.user.email_confirmed) await sendConfirmation(signedIn.user);
  return redirect(outcomePath('/confirm-email', 'resent'), 303);
});
