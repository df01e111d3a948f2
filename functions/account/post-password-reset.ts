import { noticePage } from '#shared/auth/account-pages';
import { requestPasswordReset } from '#shared/auth/accounts';
import { pageContext } from '#shared/auth/web';
import { parseForm } from '#shared/http/form';
import { checkCsrf } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/** POST /password-reset — e-mails a reset link when the address has an account; the answer is the same either way. */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  if (form.email) await requestPasswordReset(form.email);
  return noticePage(viewer, 'Check your e-mail', 'If this address has an account, we sent it a link to choose a new password. The link works for one hour.');
});
