import { outcomePath, signupPage } from '#shared/views/account-pages';
import { signUp } from '#shared/runtime';
import { signupProblems } from '#shared/domain/signup';
import { pageContext } from '#shared/accounts/session';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';

/**
 * POST /signup — creates the account and sends the confirmation e-mail; never says whether the address
 * was taken. Then 303 to the page that says so (GET /signup?done=signed-up): a reload sends nothing again.
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { viewer } = await pageContext(event);
  const problems = await signupProblems(form);
  if (Object.keys(problems).length > 0) {
    const { password: _password, ...values } = form;
    return signupPage(viewer, values, problems, 400);
  }
  await signUp(form);
  return redirect(outcomePath('/signup', 'signed-up'), 303);
});
