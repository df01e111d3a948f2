import { NO_WEBHOOK, WEBHOOK_FORM, webhookForm } from '#shared/pages/webhook-forms';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { sendTestEvent } from '#shared/runtime';
import { webhookDonePath } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/webhook/test — queues a `webhook.test` event for the application's
 * webhook URL, then back to the application page (303), where it appears among the deliveries.
 * Without a webhook: the page with the error (400). One BatchGetItem (session, user, application,
 * subscription), then what dispatch.ts sendTestEvent does (the delivery item and the queue message).
 */
export const handler = pageHandler(WEBHOOK_FORM, async (page) => {
  const read = webhookForm(page);
  if (!read.subscription) return read.refuse('webhook_url', NO_WEBHOOK);
  await sendTestEvent(read.app.clientId);
  return redirect(webhookDonePath(read.app.clientId, 'webhook-test-sent'), 303);
});
