import { expiredLinkPage, newPasswordPage, outcomePath } from '#shared/views/account-pages';
import { setNewPassword } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /password-reset/confirm — sets the new password, ends every session of the account and, with
 * `sign_out_apps` (the form's checkbox, checked by default), every application's access first
 * (setNewPassword, which says what it costs). Then 303 to GET /password-reset/confirm?done=password-changed.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'optional' }, async ({ form, viewer }) => {
  const token = form.token ?? '';
  const signOutApps = form.sign_out_apps === 'yes';
  const result = await setNewPassword(token, form.password ?? '', signOutApps);
  if (result.outcome === 'expired') return expiredLinkPage(viewer, 'reset-password');
  if (result.outcome === 'refused') return newPasswordPage(viewer, token, result.problem, 400, signOutApps);
  return redirect(outcomePath('/password-reset/confirm', 'password-changed'), 303);
});
