import { appPage } from '#shared/views/account-pages';
import { ownedApp, pathClientId } from '#shared/console/developer';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { webhookView } from '#shared/console/webhook-console';
import { pageHandler } from '#shared/http/page-handler';
import { WEBHOOK_OUTCOMES, webhookOutcomeOf } from '#shared/views/console-links';

/**
 * GET /developer/apps/{client_id} — one of my applications, editable, with its webhook and last
 * deliveries. One BatchGetItem (session, user, application, webhook subscription), and one Query
 * (the last deliveries) when there is a subscription.
 */
export const handler = pageHandler(async (event) => {
  const { signedIn, client, viewer, webhook } = await pageContext(event, pathClientId(event), true);
  if (!signedIn) return loginRedirect(event.rawPath);
  const app = ownedApp(client, signedIn.user.id);
  const done = webhookOutcomeOf(event.queryStringParameters);
  return appPage(viewer, app, undefined, {}, undefined, await webhookView(app.clientId, webhook, { notice: done && WEBHOOK_OUTCOMES[done] }));
});
