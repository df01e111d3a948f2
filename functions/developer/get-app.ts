import { appPage } from '#shared/auth/account-pages';
import { ownedApp } from '#shared/auth/developer';
import { loginRedirect, pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /developer/apps/{client_id} — one of my applications, editable. */
export const handler = pageHandler(async (event) => {
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect(event.rawPath);
  return appPage(viewer, await ownedApp(event, signedIn.user.id));
});
