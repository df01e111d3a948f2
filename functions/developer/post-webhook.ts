import { newSecretReveal } from '#shared/console/developer';
import { allowLocalHttp, clients, webhooks } from '#shared/runtime';
import { secure } from '#shared/accounts/session';
import { readWebhookForm } from '#shared/console/webhook-console';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';
import { checkWebhookUrl } from '#shared/webhooks/url-safety';
import { secretPath, webhookDonePath } from '#shared/views/console-links';

/**
 * POST /developer/apps/{client_id}/webhook — registers or changes the application's one webhook URL
 * once checkWebhookUrl accepts it (https on a public address; http://localhost on the local service
 * only), else the application page with the reason (400), nothing stored. A first registration
 * creates the signing secret and redirects (303) to the page that shows it once; a change keeps the
 * secrets (and starts a stopped subscription again) and returns to the application page. One
 * BatchGetItem (session, user, application, subscription), the subscription's write, and for a
 * first registration a PutItem (the secret to show).
 */
export const handler = pageHandler(async (event) => {
  const read = await readWebhookForm(event);
  if ('redirect' in read) return read.redirect;
  const raw = (read.form.webhook_url ?? '').trim();
  const checked = await checkWebhookUrl(raw, { allowLocalHttp: allowLocalHttp() });
  if (!checked.ok) return read.refuse('webhook_url', checked.reason, raw);
  const { secret } = await webhooks.setUrl(read.app.clientId, checked.url.href);
  if (secret === undefined) return redirect(webhookDonePath(read.app.clientId, 'webhook-saved'), 303);
  const { reveal, cookie } = newSecretReveal(read.app, secret, 'webhook-registered', new Date(), secure);
  await clients.saveSecretReveal(reveal);
  return redirect(secretPath(read.app.clientId), 303, [cookie]);
});
