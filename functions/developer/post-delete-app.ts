import { ownedApp, pathClientId } from '#shared/auth/developer';
import { clients, grants } from '#shared/auth/runtime';
import { loginRedirect, readPage } from '#shared/auth/web';
import { parseForm } from '#shared/http/form';
import { checkCsrf, redirect } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/** POST /developer/apps/{client_id}/delete — deletes the application and revokes every grant of it. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn, client } = await readPage(event, pathClientId(event));
  if (!signedIn) return loginRedirect('/developer', 303);
  const app = ownedApp(client, signedIn.user.id);
  // Revoke first: if deletion then fails, no token of it works anyway.
  await grants.revokeFamiliesOf(app.clientId);
  await clients.deleteClient(signedIn.user.id, app.clientId);
  return redirect('/developer', 303);
});
