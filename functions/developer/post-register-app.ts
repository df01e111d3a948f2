import { randomUUID } from 'node:crypto';
import { developerPage } from '#shared/views/account-pages';
import { newSecretReveal, registrationFrom } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { hashSecret, randomToken } from '#shared/secrets';
import { loginRedirect, pageContext, secure } from '#shared/accounts/session';
import { registrationProblems } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';
import { secretPath } from '#shared/views/console-links';

/**
 * POST /developer/apps — registers an application, its secret stored as a hash, and redirects (303)
 * to the page that shows the secret once (GET /developer/apps/{client_id}/secret), so a reload
 * registers nothing. One BatchGetItem (session, user) and one transaction (application, secret to show).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect('/developer', 303);
  const registration = registrationFrom(form);
  const problems = registrationProblems(registration);
  if (Object.keys(problems).length > 0) {
    return developerPage(viewer, await clients.listClientsByDeveloper(signedIn.user.id), form, problems, 400);
  }
  const now = new Date();
  const secret = randomToken();
  const app = {
    ...registration,
    clientId: randomUUID(),
    secretHash: hashSecret(secret),
    developerId: signedIn.user.id,
    developerName: `${signedIn.user.firstname} ${signedIn.user.lastname}`,
    createdAt: formatTimestamp(now),
    secretCreatedAt: formatTimestamp(now),
  };
  const { reveal, cookie } = newSecretReveal(app, secret, 'registered', now, secure);
  await clients.registerClient(app, reveal);
  return redirect(secretPath(app.clientId), 303, [cookie]);
});
