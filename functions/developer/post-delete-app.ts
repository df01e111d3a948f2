import { ownedApp, pathClientId } from '#shared/auth/developer';
import { clients, grants } from '#shared/auth/runtime';
import { loginRedirect, readPage } from '#shared/auth/web';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /developer/apps/{client_id}/delete — deletes the application and everything its users
 * granted it: one BatchGetItem (session, user, application), one Query (its active token families
 * and its users' consents, indexed together), and one transaction that revokes the families, deletes
 * the consents and deletes the application (more only beyond 100 items).
 */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn, client } = await readPage(event, pathClientId(event));
  if (!signedIn) return loginRedirect('/developer', 303);
  const app = ownedApp(client, signedIn.user.id);
  const { families, consentUserIds } = await grants.grantsOf(app.clientId);
  await grants.revokeFamiliesThen(families, clients.deleteClientItem(signedIn.user.id, app.clientId), 'No such application.', {
    deleting: consentUserIds.map((userId) => grants.deleteConsentItem(userId, app.clientId)),
  });
  return redirect('/developer', 303);
});
