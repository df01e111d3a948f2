import { webhooks } from '#shared/runtime';
import { WEBHOOK_FORM, webhookForm } from '#shared/pages/webhook-forms';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { webhookDonePath } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/webhook/delete — removes the application's webhook (URL and
 * signing secrets) once the developer ticked the confirmation (else the page with the error, 400),
 * then back to the application page (303). One BatchGetItem (session, user, application,
 * subscription) and one DeleteItem.
 */
export const handler = pageHandler(WEBHOOK_FORM, async (page) => {
  const read = webhookForm(page);
  if (read.subscription && read.form.confirm !== 'yes') return read.refuse('webhook_remove', 'Tick the box to confirm that you want to remove the webhook.');
  if (read.subscription) await webhooks.removeSubscription(read.app.clientId);
  return redirect(webhookDonePath(read.app.clientId, 'webhook-removed'), 303);
});
