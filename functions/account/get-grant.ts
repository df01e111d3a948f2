import { devices, grants } from '#shared/runtime';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { NotFoundError } from '#shared/errors';
import { grantPage } from '#shared/views/grant-pages';
import { asksForDevices } from '#shared/views/oauth-pages';

/**
 * GET /account/apps/{client_id} — one application's grant (docs/api.md#managing-a-grant): its scopes,
 * the devices it sees, when it last used its access, and the form that changes them. One
 * BatchGetItem (session, user, application, consent), then, together, one Query of the user's
 * devices (for a grant with device scopes) and one of the grant's token families (its last use).
 * An application the user has not authorized is a 404.
 */
export const handler = pageHandler({
  session: 'required', reads: { client: (event) => event.pathParameters?.client_id, consent: true }, loginReturn: thisPage,
}, async ({ signedIn, client, consent, viewer }) => {
  if (!client || !consent) throw new NotFoundError('You have not authorized this application.');
  const [owned, lastUse] = await Promise.all([
    asksForDevices(consent.scopes) ? devices.listDevicesByOwner(signedIn.user.id) : undefined,
    grants.lastUseOf(client.clientId, signedIn.user.id),
  ]);
  return grantPage(viewer, { client, consent, owned, lastUse });
});
