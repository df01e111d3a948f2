import { outcomePath, signupPage } from '#shared/views/account-pages';
import { signUp } from '#shared/runtime';
import { signupProblems } from '#shared/domain/signup';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /signup — creates the account and sends the confirmation e-mail; never says whether the address
 * was taken. Then 303 to the page that says so (GET /signup?done=signed-up): a reload sends nothing again.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'optional' }, async ({ form, viewer }) => {
  const problems = await signupProblems(form);
  if (Object.keys(problems).length > 0) {
    const { password: _password, ...values } = form;
    return signupPage(viewer, values, problems, 400);
  }
  await signUp(form);
  return redirect(outcomePath('/signup', 'signed-up'), 303);
});
