import { sessions } from '#shared/runtime';
import { secure } from '#shared/accounts/session';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';

/** POST /logout — ends the session on the server and in the browser. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const sessionId = readCookie(event, SESSION_COOKIE);
  if (sessionId) await sessions.deleteSession(sessionId);
  return redirect('/login', 303, [setCookie(SESSION_COOKIE, '', { secure, maxAgeSeconds: 0 })]);
});
