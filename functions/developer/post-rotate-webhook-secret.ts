import { revealWebhookSecret, webhooks } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { NO_WEBHOOK, WEBHOOK_FORM, webhookForm } from '#shared/pages/webhook-forms';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { secretPath } from '#shared/views/console-links';
import { WEBHOOK_SECRET_OVERLAP_SECONDS } from '#shared/domain/webhook';

/**
 * POST /developer/apps/{client_id}/webhook/secret — a new webhook signing secret, once the developer
 * ticked the confirmation (else the page with the error, 400). The current secret keeps signing for
 * WEBHOOK_SECRET_OVERLAP_SECONDS (24 h) beside it; an older one ends. Redirects (303) to the page
 * that shows the new secret once. One BatchGetItem (session, user, application, subscription), the
 * subscription's update, and a PutItem (the secret to show).
 */
export const handler = pageHandler(WEBHOOK_FORM, async (page) => {
  const read = webhookForm(page);
  if (!read.subscription) return read.refuse('webhook_url', NO_WEBHOOK);
  if (read.form.confirm !== 'yes') return read.refuse('webhook_rotate', 'Tick the box to confirm that you want a new signing secret.');
  const secret = await webhooks.rotateSecret(read.app.clientId, WEBHOOK_SECRET_OVERLAP_SECONDS);
  return redirect(secretPath(read.app.clientId), 303, [await revealWebhookSecret(read.app, secret, 'webhook-rotated', secureCookie())]);
});
