import { expiredLinkPage, newPasswordPage, outcomePath } from '#shared/auth/account-pages';
import { hashPassword } from '#shared/auth/password';
import { links, sessions, users } from '#shared/auth/runtime';
import { pageContext } from '#shared/auth/web';
import { passwordProblem } from '#shared/domain/password-policy';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';

/**
 * POST /password-reset/confirm — sets the new password, uses up the link and ends every session of
 * the account (whoever was signed in with the old password) in one transaction: GetItem (link),
 * GetItem (user, for the password policy), Query (the sessions), TransactWriteItems. Then 303 to
 * GET /password-reset/confirm?done=password-changed.
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  const token = form.token ?? '';
  const userId = await links.peekLink('reset-password', token);
  const user = userId && (await users.getUserById(userId));
  if (!user) return expiredLinkPage(viewer, 'reset-password');
  const problem = await passwordProblem(form.password ?? '', { email: user.email, names: [user.firstname, user.lastname] });
  if (problem) return newPasswordPage(viewer, token, problem, 400);
  const passwordHash = await hashPassword(form.password!);
  const signedInElsewhere = await sessions.sessionKeysOf(user.id);
  if (!(await links.redeemLink('reset-password', token, user.id, { passwordHash }, signedInElsewhere))) {
    return expiredLinkPage(viewer, 'reset-password');
  }
  return redirect(outcomePath('/password-reset/confirm', 'password-changed'), 303);
});
