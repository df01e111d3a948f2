import { appPage } from '#shared/views/account-pages';
import { ownedApp, pathClientId, registrationFrom } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { webhookView } from '#shared/console/webhook-console';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { registrationProblems } from '#shared/domain/client';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';

/** POST /developer/apps/{client_id} — edits name, description, website and redirect URIs. */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, client, viewer, webhook } = await pageContext(event, pathClientId(event), true);
  if (!signedIn) return loginRedirect(event.rawPath, 303);
  const app = ownedApp(client, signedIn.user.id);
  const registration = registrationFrom(form);
  const problems = registrationProblems(registration);
  if (Object.keys(problems).length > 0) return appPage(viewer, app, form, problems, 400, await webhookView(app.clientId, webhook));
  await clients.updateClient(signedIn.user.id, app.clientId, registration);
  return redirect(`/developer/apps/${encodeURIComponent(app.clientId)}`, 303);
});
