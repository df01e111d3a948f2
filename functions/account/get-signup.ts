import { outcomeOf, outcomePage, signupPage } from '#shared/views/account-pages';
import { pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/** GET /signup — the sign-up form; with `?done=signed-up`, what the form did. */
export const handler = pageHandler(async (event) => {
  const { viewer } = await pageContext(event);
  const done = outcomeOf(event.queryStringParameters, 'signed-up');
  return done ? outcomePage(viewer, done) : signupPage(viewer);
});
