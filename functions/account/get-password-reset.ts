import { outcomeOf, outcomePage, resetRequestPage } from '#shared/views/account-pages';
import { pageHandler } from '#shared/pages/page-handler';

/** GET /password-reset — asks for the account's e-mail address; with `?done=reset-sent`, what the form did. */
export const handler = pageHandler({ session: 'optional' }, async ({ event, viewer }) => {
  const done = outcomeOf(event.queryStringParameters, 'reset-sent');
  return done ? outcomePage(viewer, done) : resetRequestPage(viewer);
});
