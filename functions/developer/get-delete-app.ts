import { deleteAppPage } from '#shared/views/account-pages';
import { ownedApp, pathClientId } from '#shared/console/developer';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/** GET /developer/apps/{client_id}/delete — asks for the application's name before deleting it. One BatchGetItem (session, user, application). */
export const handler = pageHandler(async (event) => {
  const { signedIn, client, viewer } = await pageContext(event, pathClientId(event));
  if (!signedIn) return loginRedirect(event.rawPath);
  return deleteAppPage(viewer, ownedApp(client, signedIn.user.id));
});
