import { outcomeOf, outcomePage, resetRequestPage } from '#shared/views/account-pages';
import { pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/** GET /password-reset — asks for the account's e-mail address; with `?done=reset-sent`, what the form did. */
export const handler = pageHandler(async (event) => {
  const { viewer } = await pageContext(event);
  const done = outcomeOf(event.queryStringParameters, 'reset-sent');
  return done ? outcomePage(viewer, done) : resetRequestPage(viewer);
});
