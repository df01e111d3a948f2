import { sessions } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { redirect } from '#shared/http/responses';

/** POST /logout — ends the session on the server and in the browser (one DeleteItem: the session is not read first). */
export const handler = pageHandler({ form: true, csrf: true }, async ({ event }) => {
  const sessionId = readCookie(event, SESSION_COOKIE);
  if (sessionId) await sessions.deleteSession(sessionId);
  return redirect('/login', 303, [setCookie(SESSION_COOKIE, '', { secure: secureCookie(), maxAgeSeconds: 0 })]);
});
