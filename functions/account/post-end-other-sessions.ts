import { sessions } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { sessionKey } from '#shared/data/item-keys';
import { hashSecret } from '#shared/secrets';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/sessions/end-others — signs every other browser of the user out (the
 * security page's button, for a browser left signed in somewhere or one she does not recognise):
 * a Query on GSI1 of her sessions' keys, then a DeleteItem of each but this browser's; 303 to
 * GET /account/security?done=others-signed-out.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ signedIn }) => {
  const current = sessionKey(hashSecret(signedIn.sessionId));
  const others = (await sessions.sessionKeysOf(signedIn.user.id)).filter((key) => key.pk !== current.pk || key.sk !== current.sk);
  await sessions.endSessions(others);
  return redirect('/account/security?done=others-signed-out', 303);
});
