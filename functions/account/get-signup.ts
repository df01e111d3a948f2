import { outcomeOf, outcomePage, signupPage } from '#shared/views/account-pages';
import { pageHandler } from '#shared/pages/page-handler';

/** GET /signup — the sign-up form; with `?done=signed-up`, what the form did. */
export const handler = pageHandler({ session: 'optional' }, async ({ event, viewer }) => {
  const done = outcomeOf(event.queryStringParameters, 'signed-up');
  return done ? outcomePage(viewer, done) : signupPage(viewer);
});
