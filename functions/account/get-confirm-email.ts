import { confirmEmailPage, expiredLinkPage, outcomeOf, outcomePage } from '#shared/views/account-pages';
import { links } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';

/**
 * GET /confirm-email?token=… — asks for a click, so link scanners that fetch the URL confirm nothing.
 * With `?done=confirmed` or `?done=resent`: what the confirmation or the resend form did.
 */
export const handler = pageHandler({ session: 'optional' }, async ({ event, viewer }) => {
  const done = outcomeOf(event.queryStringParameters, 'confirmed', 'resent');
  if (done) return outcomePage(viewer, done);
  const token = event.queryStringParameters?.token ?? '';
  if (!token || !(await links.peekLink('confirm-email', token))) {
    return expiredLinkPage(viewer, 'confirm-email');
  }
  return confirmEmailPage(viewer, token);
});
