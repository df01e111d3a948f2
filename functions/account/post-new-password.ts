import { expiredLinkPage, newPasswordPage, outcomePath } from '#shared/views/account-pages';
import { endEveryAppAccess } from '#shared/oauth/app-access';
import { hashPassword } from '#shared/accounts/password';
import { grants, links, sessions, users } from '#shared/runtime';
import { pageContext } from '#shared/accounts/session';
import { passwordProblem } from '#shared/domain/password-policy';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';
import { countMetric, METRIC } from '#shared/metrics';

/**
 * POST /password-reset/confirm — sets the new password, uses up the link (and with it every other
 * reset link of the account: the user moves to the next reset generation) and ends every session of
 * the account in one transaction: GetItem (link), GetItem (user, for the link's generation and the
 * password policy), Query (the sessions), TransactWriteItems. Then 303 to
 * GET /password-reset/confirm?done=password-changed.
 *
 * With `sign_out_apps` (the form's checkbox, checked by default), every application the user
 * authorized loses its access first, as the account page's revoke does it (one Query for the
 * consents, then a Query and a transaction per application). First, not after: until the password
 * transaction the link still works, so a failure on the way (503) leaves it usable and the user's
 * retry finishes the revocation, which is idempotent; the password transaction comes last.
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  const token = form.token ?? '';
  const link = token ? await links.readLink('reset-password', token) : undefined;
  const record = link && (await users.getUserRecord(link.userId));
  if (!record || record.resetGeneration !== link.generation) return expiredLinkPage(viewer, 'reset-password');
  const { user } = record;
  const signOutApps = form.sign_out_apps === 'yes';
  const problem = await passwordProblem(form.password ?? '', { email: user.email, names: [user.firstname, user.lastname] });
  if (problem) return newPasswordPage(viewer, token, problem, 400, signOutApps);
  const passwordHash = await hashPassword(form.password!);
  if (signOutApps) countMetric(METRIC.grantsRevoked, await endEveryAppAccess(grants, user.id));
  const signedInElsewhere = await sessions.sessionKeysOf(user.id);
  if (!(await links.redeemLink('reset-password', token, user.id, { passwordHash }, signedInElsewhere, new Date(), link.generation))) {
    return expiredLinkPage(viewer, 'reset-password');
  }
  return redirect(outcomePath('/password-reset/confirm', 'password-changed'), 303);
});
