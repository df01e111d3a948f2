import { ownedApp, pathClientId } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { loginRedirect, readPage } from '#shared/accounts/session';
import { parseForm } from '#shared/http/form';
import { checkCsrf } from '#shared/http/csrf';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';

/**
 * POST /developer/apps/{client_id}/secret/retire — ends the previous client secret at once (the
 * current one is unaffected), then back to the application's page (303). One BatchGetItem (session,
 * user, application) and one UpdateItem.
 */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn, client } = await readPage(event, pathClientId(event));
  if (!signedIn) return loginRedirect('/developer', 303);
  const app = ownedApp(client, signedIn.user.id);
  await clients.retirePreviousSecret(signedIn.user.id, app.clientId);
  return redirect(`/developer/apps/${encodeURIComponent(app.clientId)}`, 303);
});
