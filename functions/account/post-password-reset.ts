import { outcomePath } from '#shared/views/account-pages';
import { requestPasswordReset } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/** Longer than sending a link takes, so both answers arrive after the same delay. */
const MIN_RESPONSE_MS = 750;

/**
 * POST /password-reset — e-mails a reset link when the address has an account; the answer is the same
 * either way: 303 to GET /password-reset?done=reset-sent, so a reload sends no second link. The
 * session is not read: the page does not depend on one.
 */
export const handler = pageHandler({ form: true, csrf: true }, async ({ form }) => {
  // Known and unknown addresses take the same time, so the timing tells nothing either.
  await Promise.all([form.email ? requestPasswordReset(form.email) : undefined, new Promise((r) => setTimeout(r, MIN_RESPONSE_MS))]);
  return redirect(outcomePath('/password-reset', 'reset-sent'), 303);
});
