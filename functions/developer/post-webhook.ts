import { allowLocalHttp, revealWebhookSecret, webhooks } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { WEBHOOK_FORM, webhookForm } from '#shared/pages/webhook-forms';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { checkWebhookUrl } from '#shared/webhooks/url-safety';
import { secretPath, webhookDonePath } from '#shared/views/console-links';

/** http://localhost is for the local service only (it sets the variable; AWS never does). */

/**
 * POST /developer/apps/{client_id}/webhook — registers or changes the application's one webhook URL
 * once checkWebhookUrl accepts it (https on a public address; http://localhost on the local service
 * only), else the application page with the reason (400), nothing stored. A first registration
 * creates the signing secret and redirects (303) to the page that shows it once; a change keeps the
 * secrets (and starts a stopped subscription again) and returns to the application page. One
 * BatchGetItem (session, user, application, subscription), the subscription's write, and for a
 * first registration a PutItem (the secret to show).
 */
export const handler = pageHandler(WEBHOOK_FORM, async (page) => {
  const read = webhookForm(page);
  const raw = (read.form.webhook_url ?? '').trim();
  const checked = await checkWebhookUrl(raw, { allowLocalHttp: allowLocalHttp() });
  if (!checked.ok) return read.refuse('webhook_url', checked.reason, raw);
  const { secret } = await webhooks.setUrl(read.app.clientId, checked.url.href);
  if (secret === undefined) return redirect(webhookDonePath(read.app.clientId, 'webhook-saved'), 303);
  return redirect(secretPath(read.app.clientId), 303, [await revealWebhookSecret(read.app, secret, 'webhook-registered', secureCookie())]);
});
