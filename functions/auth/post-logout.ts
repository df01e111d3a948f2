import { sessions } from '#shared/auth/runtime';
import { secure } from '#shared/auth/web';
import { parseForm } from '#shared/http/form';
import { checkCsrf, readCookie, redirect, SESSION_COOKIE, setCookie } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/** POST /logout — ends the session on the server and in the browser. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const sessionId = readCookie(event, SESSION_COOKIE);
  if (sessionId) await sessions.deleteSession(sessionId);
  return redirect('/login', 303, [setCookie(SESSION_COOKIE, '', { secure, maxAgeSeconds: 0 })]);
});
