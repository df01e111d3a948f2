import { ownedApp, pathClientId } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { isPublicClient } from '#shared/domain/client';
import { BadRequestError } from '#shared/errors';
import { NO_SECRET } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/secret/retire — ends the previous client secret at once (the
 * current one is unaffected), then back to the application's page (303). One BatchGetItem (session,
 * user, application) and one UpdateItem. A native or browser application has no secret: 400, nothing written.
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { client: pathClientId }, loginReturn: '/developer',
}, async ({ signedIn, client }) => {
  const app = ownedApp(client, signedIn.user.id);
  if (isPublicClient(app)) throw new BadRequestError(NO_SECRET);
  await clients.retirePreviousSecret(signedIn.user.id, app.clientId);
  return redirect(`/developer/apps/${encodeURIComponent(app.clientId)}`, 303);
});
