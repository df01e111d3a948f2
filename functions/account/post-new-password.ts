import { expiredLinkPage, newPasswordPage, noticePage } from '#shared/auth/account-pages';
import { hashPassword } from '#shared/auth/password';
import { links, sessions, users } from '#shared/auth/runtime';
import { pageContext } from '#shared/auth/web';
import { passwordProblem } from '#shared/domain/password-policy';
import { parseForm } from '#shared/http/form';
import { checkCsrf } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/** POST /password-reset/confirm — sets the new password and uses up the link in one transaction, then ends every session. */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  const token = form.token ?? '';
  const userId = await links.peekLink('reset-password', token);
  const user = userId && (await users.getUserById(userId));
  if (!user) return expiredLinkPage(viewer, 'reset-password');
  const problem = passwordProblem(form.password ?? '', user.email);
  if (problem) return newPasswordPage(viewer, token, problem, 400);
  if (!(await links.redeemLink('reset-password', token, { passwordHash: await hashPassword(form.password!) }))) return expiredLinkPage(viewer, 'reset-password');
  // Whoever was signed in with the old password is signed out everywhere.
  await sessions.deleteSessionsOf(user.id);
  return noticePage(viewer, 'Password changed', 'Your new password is set. Sign in with it.', 200, { href: '/login', text: 'Sign in' });
});
