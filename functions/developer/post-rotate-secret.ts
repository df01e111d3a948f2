import { ownedApp, pathClientId } from '#shared/console/developer';
import { rotateAppSecret } from '#shared/runtime';
import { webhookView } from '#shared/pages/webhook-forms';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { secureCookie } from '#shared/pages/session';
import { redirect } from '#shared/http/responses';
import { isPublicClient } from '#shared/domain/client';
import { BadRequestError } from '#shared/errors';
import { NO_SECRET, secretPath } from '#shared/views/console-links';
import { appPage } from '#shared/views/console-pages';

/**
 * POST /developer/apps/{client_id}/secret — replaces the client secret once the developer ticked the
 * confirmation. The current secret becomes the previous one, still accepted for
 * PREVIOUS_SECRET_OVERLAP_SECONDS (7 days) unless retired sooner; a previous one still valid is
 * replaced, and so ends. Redirects (303) to the page that shows the new secret once. One BatchGetItem
 * (session, user, application) and one transaction (rotateAppSecret: the application, the secret to show).
 * A native or browser application has no secret to replace: 400, nothing written.
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { client: pathClientId, webhook: true }, loginReturn: thisPage,
}, async ({ form, signedIn, client, viewer, webhook }) => {
  const app = ownedApp(client, signedIn.user.id);
  // A native or browser application has no secret, and never gets one (RFC 8252 §8.5).
  if (isPublicClient(app)) throw new BadRequestError(NO_SECRET);
  if (form.confirm !== 'yes') {
    return appPage(viewer, app, undefined, { confirm: 'Tick the box to confirm that you want a new secret.' }, 400, await webhookView(app.clientId, webhook));
  }
  return redirect(secretPath(app.clientId), 303, [await rotateAppSecret(app, secureCookie())]);
});
