import { ownedApp, pathClientId } from '#shared/console/developer';
import { webhookView } from '#shared/pages/webhook-forms';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { WEBHOOK_OUTCOMES, webhookOutcomeOf } from '#shared/views/console-links';
import { appPage } from '#shared/views/console-pages';

/**
 * GET /developer/apps/{client_id} — one of my applications, editable, with its webhook and last
 * deliveries. One BatchGetItem (session, user, application, webhook subscription), and one Query
 * (the last deliveries) when there is a subscription.
 */
export const handler = pageHandler({
  session: 'required', reads: { client: pathClientId, webhook: true }, loginReturn: thisPage,
}, async ({ event, signedIn, client, viewer, webhook }) => {
  const app = ownedApp(client, signedIn.user.id);
  const done = webhookOutcomeOf(event.queryStringParameters);
  return appPage(viewer, app, undefined, {}, undefined, await webhookView(app.clientId, webhook, { notice: done && WEBHOOK_OUTCOMES[done] }));
});
