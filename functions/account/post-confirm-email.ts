import { expiredLinkPage, outcomePath } from '#shared/views/account-pages';
import { links } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /confirm-email — uses up the link and sets email_confirmed: GetItem (link), then one
 * transaction; then 303 to GET /confirm-email?done=confirmed (a reload does not meet the used link).
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'optional' }, async ({ form, viewer }) => {
  const token = form.token ?? '';
  const userId = await links.peekLink('confirm-email', token);
  if (!userId || !(await links.redeemLink('confirm-email', token, userId, { email_confirmed: true }))) {
    return expiredLinkPage(viewer, 'confirm-email');
  }
  return redirect(outcomePath('/confirm-email', 'confirmed'), 303);
});
