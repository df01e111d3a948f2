import { sessions } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { NotFoundError } from '#shared/errors';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/sessions/{session_id}/end — signs one of the user's other browsers out: its
 * session (the id is the hash of its cookie) deleted on condition it is the user's (one DeleteItem),
 * then 303 to GET /account/security?done=session-ended. Another user's, an ended or an unknown
 * session: 404.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ event, signedIn }) => {
  const sessionId = event.pathParameters?.session_id ?? '';
  if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId) || !(await sessions.endSession(signedIn.user.id, sessionId))) {
    throw new NotFoundError('You have no such signed-in browser: it may have signed out already.');
  }
  return redirect('/account/security?done=session-ended', 303);
});
