import { expiredLinkPage, newPasswordPage, outcomeOf, outcomePage } from '#shared/views/account-pages';
import { resetLinkAccount } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';

/**
 * GET /password-reset/confirm?token=… — the new-password form, if the link is still good
 * (resetLinkAccount: GetItem link, GetItem user). `?done=password-changed`: the outcome.
 */
export const handler = pageHandler({ session: 'optional' }, async ({ event, viewer }) => {
  const done = outcomeOf(event.queryStringParameters, 'password-changed');
  if (done) return outcomePage(viewer, done);
  const token = event.queryStringParameters?.token ?? '';
  if (!(await resetLinkAccount(token))) return expiredLinkPage(viewer, 'reset-password');
  return newPasswordPage(viewer, token);
});
