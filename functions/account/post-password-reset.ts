import { noticePage } from '#shared/auth/account-pages';
import { requestPasswordReset } from '#shared/auth/accounts';
import { pageContext } from '#shared/auth/web';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';

/** Longer than sending a link takes, so both answers arrive after the same delay. */
const MIN_RESPONSE_MS = 750;

/** POST /password-reset — e-mails a reset link when the address has an account; the answer is the same either way. */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  // Known and unknown addresses take the same time, so the timing tells nothing either.
  await Promise.all([form.email ? requestPasswordReset(form.email) : undefined, new Promise((r) => setTimeout(r, MIN_RESPONSE_MS))]);
  return noticePage(viewer, 'Check your e-mail', 'If this address has an account, we sent it a link to choose a new password. The link works for one hour.');
});
