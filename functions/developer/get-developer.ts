import { developerPage } from '#shared/views/account-pages';
import { clients } from '#shared/runtime';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/** GET /developer — my applications and the registration form. */
export const handler = pageHandler(async (event) => {
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect('/developer');
  return developerPage(viewer, await clients.listClientsByDeveloper(signedIn.user.id));
});
