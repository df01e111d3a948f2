import { audience, clients } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { developerPage } from '#shared/views/console-pages';

/** GET /developer — my applications and the registration form. */
export const handler = pageHandler({ session: 'required', loginReturn: '/developer' }, async ({ signedIn, viewer }) =>
  developerPage(viewer, audience(), await clients.listClientsByDeveloper(signedIn.user.id)));
