import { expiredLinkPage, newPasswordPage, outcomeOf, outcomePage } from '#shared/auth/account-pages';
import { links } from '#shared/auth/runtime';
import { pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /password-reset/confirm?token=… — the new-password form, if the link is still good; `?done=password-changed`: the outcome. */
export const handler = pageHandler(async (event) => {
  const { viewer } = await pageContext(event);
  const done = outcomeOf(event.queryStringParameters, 'password-changed');
  if (done) return outcomePage(viewer, done);
  const token = event.queryStringParameters?.token ?? '';
  if (!token || !(await links.peekLink('reset-password', token))) {
    return expiredLinkPage(viewer, 'reset-password');
  }
  return newPasswordPage(viewer, token);
});
