import { clientTypeFrom, registrationFrom } from '#shared/console/developer';
import { audience, clients, registerApp } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { registrationProblems } from '#shared/domain/client';
import { redirect } from '#shared/http/responses';
import { appPath, secretPath } from '#shared/views/console-links';
import { developerPage } from '#shared/views/console-pages';

/**
 * POST /developer/apps — registers an application of the kind the developer chose. A server
 * application (confidential) gets a secret, stored as a hash, and the answer redirects (303) to the
 * page that shows it once (GET /developer/apps/{client_id}/secret); a native or browser application
 * (public) gets none and goes to its page. A reload registers nothing. One BatchGetItem (session,
 * user) and one write (registerApp: a transaction of the application and its secret to show, or
 * the public application's PutItem).
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/developer' }, async ({ form, signedIn, viewer }) => {
  const registration = registrationFrom(form);
  const clientType = clientTypeFrom(form);
  const problems = {
    ...registrationProblems(registration, clientType ?? 'confidential'),
    ...(clientType ? {} : { clientType: 'Choose a server application or a native or browser application.' }),
  };
  if (Object.keys(problems).length > 0) {
    return developerPage(viewer, audience(), await clients.listClientsByDeveloper(signedIn.user.id), form, problems, 400);
  }
  const { app, cookie } = await registerApp(signedIn.user, { ...registration, clientType: clientType! }, secureCookie());
  return cookie === undefined ? redirect(appPath(app.clientId), 303) : redirect(secretPath(app.clientId), 303, [cookie]);
});
