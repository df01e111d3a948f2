import { secretPage } from '#shared/auth/account-pages';
import { ownedApp, pathClientId } from '#shared/auth/developer';
import { clients } from '#shared/auth/runtime';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { loginRedirect, pageContext } from '#shared/auth/web';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';

/** POST /developer/apps/{client_id}/secret — replaces the client secret; the new one is shown once. */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const { signedIn, client, viewer } = await pageContext(event, pathClientId(event));
  if (!signedIn) return loginRedirect(event.rawPath, 303);
  const app = ownedApp(client, signedIn.user.id);
  const secret = randomToken();
  await clients.updateClient(signedIn.user.id, app.clientId, { secretHash: hashSecret(secret) });
  return secretPage(viewer, app, secret, false);
});
