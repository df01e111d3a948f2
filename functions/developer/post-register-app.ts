import { developerPage } from '#shared/views/account-pages';
import { registerApp, registrationFrom } from '#shared/console/developer';
import { audience, clients } from '#shared/runtime';
import { secure } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { registrationProblems } from '#shared/domain/client';
import { redirect } from '#shared/http/responses';
import { secretPath } from '#shared/views/console-links';

/**
 * POST /developer/apps — registers an application, its secret stored as a hash, and redirects (303)
 * to the page that shows the secret once (GET /developer/apps/{client_id}/secret), so a reload
 * registers nothing. One BatchGetItem (session, user) and one transaction (registerApp: application, secret to show).
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/developer' }, async ({ form, signedIn, viewer }) => {
  const registration = registrationFrom(form);
  const problems = registrationProblems(registration);
  if (Object.keys(problems).length > 0) {
    return developerPage(viewer, audience(), await clients.listClientsByDeveloper(signedIn.user.id), form, problems, 400);
  }
  const { app, cookie } = await registerApp(clients, signedIn.user, registration, secure);
  return redirect(secretPath(app.clientId), 303, [cookie]);
});
