import { noticePage } from '#shared/auth/account-pages';
import { sendConfirmation } from '#shared/auth/accounts';
import { loginRedirect, pageContext } from '#shared/auth/web';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';

/** POST /confirm-email/resend — a new confirmation link for the signed-in user. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect('/account', 303);
  if (!signedIn.user.email_confirmed) await sendConfirmation(signedIn.user);
  return noticePage(viewer, 'Check your e-mail', `We sent a new confirmation link to ${signedIn.user.email}.`, 200, { href: '/account', text: 'Your account' });
});
