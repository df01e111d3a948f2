import { newPasswordPage, noticePage } from '#shared/auth/account-pages';
import { links } from '#shared/auth/runtime';
import { pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /password-reset/confirm?token=… — the new-password form, if the link is still good. */
export const handler = pageHandler(async (event) => {
  const { viewer } = await pageContext(event);
  const token = event.queryStringParameters?.token ?? '';
  if (!token || !(await links.peekLink('reset-password', token))) {
    return noticePage(viewer, 'Link expired', 'This reset link is invalid, expired or already used. Ask for a new one.', 400, { href: '/password-reset', text: 'Reset your password' });
  }
  return newPasswordPage(viewer, token);
});
