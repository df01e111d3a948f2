import { ownedApp, pathClientId } from '#shared/console/developer';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { deleteAppPage } from '#shared/views/console-pages';

/** GET /developer/apps/{client_id}/delete — asks for the application's name before deleting it. One BatchGetItem (session, user, application). */
export const handler = pageHandler({ session: 'required', reads: { client: pathClientId }, loginReturn: thisPage }, async ({ signedIn, client, viewer }) =>
  deleteAppPage(viewer, ownedApp(client, signedIn.user.id)));
