import { developerPage } from '#shared/views/account-pages';
import { audience, clients } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';

/** GET /developer — my applications and the registration form. */
export const handler = pageHandler({ session: 'required', loginReturn: '/developer' }, async ({ signedIn, viewer }) =>
  developerPage(viewer, audience(), await clients.listClientsByDeveloper(signedIn.user.id)));
