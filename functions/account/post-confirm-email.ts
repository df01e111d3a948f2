import { expiredLinkPage, outcomePath } from '#shared/views/account-pages';
import { links } from '#shared/runtime';
import { pageContext } from '#shared/accounts/session';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';

/**
 * POST /confirm-email — uses up the link and sets email_confirmed: GetItem (link), then one
 * transaction; then 303 to GET /confirm-email?done=confirmed (a reload does not meet the used link).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  const token = form.token ?? '';
  const userId = await links.peekLink('confirm-email', token);
  if (!userId || !(await links.redeemLink('confirm-email', token, userId, { email_confirmed: true }))) {
    return expiredLinkPage(viewer, 'confirm-email');
  }
  return redirect(outcomePath('/confirm-email', 'confirmed'), 303);
});
