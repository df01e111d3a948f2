import { randomUUID } from 'node:crypto';
import { developerPage, secretPage } from '#shared/auth/account-pages';
import { registrationFrom } from '#shared/auth/developer';
import { clients } from '#shared/auth/runtime';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { loginRedirect, pageContext } from '#shared/auth/web';
import { registrationProblems } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';

/** POST /developer/apps — registers an application; its secret is shown once and stored as a hash. */
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
  const secret = randomToken();
  const app = {
    ...registration,
    clientId: randomUUID(),
    secretHash: hashSecret(secret),
    developerId: signedIn.user.id,
    developerName: `${signedIn.user.firstname} ${signedIn.user.lastname}`,
    createdAt: formatTimestamp(new Date()),
  };
  await clients.createClient(app);
  return secretPage(viewer, app, secret, true);
});
