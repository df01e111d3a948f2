import { appPage } from '#shared/views/account-pages';
import { newSecretReveal, ownedApp, pathClientId } from '#shared/console/developer';
import { clients } from '#shared/runtime';
import { hashSecret, randomToken } from '#shared/secrets';
import { webhookView } from '#shared/console/webhook-console';
import { loginRedirect, pageContext, secure } from '#shared/accounts/session';
import { formatTimestamp } from '#shared/domain/time';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { redirect } from '#shared/http/responses';
import { pageHandler } from '#shared/http/page-handler';
import { secretPath } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/secret — replaces the client secret once the developer ticked the
 * confirmation. The current secret becomes the previous one, still accepted for
 * PREVIOUS_SECRET_OVERLAP_SECONDS (7 days) unless retired sooner; a previous one still valid is
 * replaced, and so ends. Redirects (303) to the page that shows the new secret once. One BatchGetItem
 * (session, user, application) and one transaction (the application, the secret to show).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, client, viewer, webhook } = await pageContext(event, pathClientId(event), true);
  if (!signedIn) return loginRedirect(event.rawPath, 303);
  const app = ownedApp(client, signedIn.user.id);
  if (form.confirm !== 'yes') {
    return appPage(viewer, app, undefined, { confirm: 'Tick the box to confirm that you want a new secret.' }, 400, await webhookView(app.clientId, webhook));
  }
  const now = new Date();
  const secret = randomToken();
  const { reveal, cookie } = newSecretReveal(app, secret, 'rotated', now, secure);
  await clients.rotateSecret(signedIn.user.id, app.clientId, hashSecret(secret), formatTimestamp(now), reveal);
  return redirect(secretPath(app.clientId), 303, [cookie]);
});
