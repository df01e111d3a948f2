import { ownedApp, pathClientId, registrationFrom } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { webhookView } from '#shared/pages/webhook-forms';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { clientTypeOf, registrationProblems } from '#shared/domain/client';
import { redirect } from '#shared/http/responses';
import { appPage } from '#shared/views/console-pages';

/**
 * POST /developer/apps/{client_id} — edits name, description, website and redirect URIs, under the
 * rules of the application's type (chosen at registration, never changed here).
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { client: pathClientId, webhook: true }, loginReturn: thisPage,
}, async ({ form, signedIn, client, viewer, webhook }) => {
  const app = ownedApp(client, signedIn.user.id);
  const registration = registrationFrom(form);
  const problems = registrationProblems(registration, clientTypeOf(app));
  if (Object.keys(problems).length > 0) return appPage(viewer, app, form, problems, 400, await webhookView(app.clientId, webhook));
  await clients.updateClient(signedIn.user.id, app.clientId, registration);
  return redirect(`/developer/apps/${encodeURIComponent(app.clientId)}`, 303);
});
