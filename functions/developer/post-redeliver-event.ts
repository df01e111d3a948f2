import { NO_WEBHOOK, WEBHOOK_FORM, webhookForm } from '#shared/pages/webhook-forms';
import { NotFoundError } from '#shared/errors';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { redeliver } from '#shared/runtime';
import { webhookDonePath } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/webhook/deliveries/{webhook_id} — "send again": queues the
 * delivery again with the same `webhook-id` and payload, then back to the application page (303).
 * A delivery that is not this application's is 404; without a webhook, the page with the error
 * (400). One BatchGetItem (session, user, application, subscription), then what dispatch.ts
 * redeliver does (GetItem and UpdateItem of the delivery, one queue message).
 */
export const handler = pageHandler(WEBHOOK_FORM, async (page) => {
  const read = webhookForm(page);
  if (!read.subscription) return read.refuse('webhook_resend', NO_WEBHOOK);
  const webhookId = page.event.pathParameters?.webhook_id ?? '';
  if (!(await redeliver(read.app.clientId, webhookId))) throw new NotFoundError('No such delivery.');
  return redirect(webhookDonePath(read.app.clientId, 'webhook-resent'), 303);
});
