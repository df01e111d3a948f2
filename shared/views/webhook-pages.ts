import type { WebhookSubscription } from '#shared/data/webhook-repo';
import { epochSeconds } from '#shared/domain/time';
import { html, type Html } from '#shared/views/html';
import { WEBHOOK_SECRET_OVERLAP_SECONDS } from '#shared/domain/webhook';
import { webhookPath } from '#shared/views/console-links';
import type { WebhookDelivery } from '#shared/data/webhook-deliveries';

/** What the application page's webhook card shows, and what its forms said back. */
export interface WebhookView {
  subscription?: WebhookSubscription;
  /** The last deliveries, newest first. */
  deliveries: readonly WebhookDelivery[];
  /** The URL the developer typed, when the form comes back with an error. */
  url?: string;
  /** Form errors by field: `webhook_url`, `webhook_rotate`, `webhook_remove`, `webhook_test`. */
  errors?: Record<string, string>;
  /** What the last webhook form did (see WEBHOOK_OUTCOMES). */
  notice?: string;
}

const STATUS_TEXT: Record<WebhookDelivery['status'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  retrying: 'Retrying',
  failed: 'Failed',
  dead: 'Gave up',
};

/** A time (epoch seconds, or a stored ISO or UTC timestamp) as people read it, to the minute. */
function readable(time: number | string | undefined): string {
  if (time === undefined) return '';
  const iso = typeof time === 'number' ? new Date(time * 1000).toISOString() : time;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** The webhook card of the application page (id `webhook`): URL form, signing secret, test event and the last deliveries. */
export function webhookCard(csrf: Html, clientId: string, view: WebhookView, now = new Date()): Html {
  const base = webhookPath(clientId);
  const sub = view.subscription;
  const errors = view.errors ?? {};
  const url = view.url ?? sub?.url ?? '';
  const previous = sub?.secrets.slice(1).find((s) => s.retiresAt !== undefined && s.retiresAt > epochSeconds(now));
  const overlapHours = WEBHOOK_SECRET_OVERLAP_SECONDS / 3600;
  const invalid = (name: string) => (errors[name] ? html`aria-invalid="true" aria-describedby="${name}-error"` : '');
  const error = (name: string) => (errors[name] ? html`<p class="error" id="${name}-error">${errors[name]}</p>` : '');
  return html`<div class="card" id="webhook"><h2>Webhook</h2>
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    <p>When a device of a user who authorized this application changes, or the user withdraws access, the service sends a
      signed event (Standard Webhooks) to this URL. One URL per application.</p>
    ${sub?.disabledAt ? html`<p class="error" id="webhook-disabled">Deliveries are stopped since ${readable(sub.disabledAt)}: the URL kept failing.
      Save the URL again (or a new one) to start them again.</p>` : ''}
    ${sub?.failingSince && !sub.disabledAt ? html`<p class="notice" id="webhook-failing">Deliveries have been failing since ${readable(sub.failingSince)}.</p>` : ''}
    <form method="post" action="${base}" novalidate>${csrf}
      <label for="webhook_url">Webhook URL</label>
      <input id="webhook_url" name="webhook_url" type="url" value="${url}" required autocomplete="off" aria-describedby="webhook_url-hint${errors.webhook_url ? ' webhook_url-error' : ''}" ${errors.webhook_url ? html`aria-invalid="true"` : ''}>
      <p class="muted" id="webhook_url-hint">https only, on a public address; http://localhost is allowed on the local service.</p>
      ${error('webhook_url')}
      <div class="actions"><button type="submit">${sub ? 'Save webhook URL' : 'Register webhook'}</button></div></form>
    ${sub ? html`
    <h3>Signing secret</h3>
    <p id="webhook-secret">Current signing secret created ${readable(sub.secrets[0]?.createdAt)}. It was shown once; you can replace it.</p>
    ${previous ? html`<p class="notice" id="webhook-previous-secret">The previous secret also signs every delivery until ${readable(previous.retiresAt)}.</p>` : ''}
    <form method="post" action="${base}/secret" novalidate>${csrf}
      <p>A new secret signs every delivery from now on; the current one keeps signing too for ${overlapHours} hours, so your
        receiver accepts deliveries while you switch it over.${previous ? ' The previous secret stops signing at once.' : ''}</p>
      <label><input type="checkbox" name="confirm" value="yes" required ${invalid('webhook_rotate')}>
        I understand, generate a new signing secret</label>
      ${error('webhook_rotate')}
      <div class="actions"><button type="submit" class="secondary">Generate a new signing secret</button></div></form>
    <h3>Test</h3>
    <form method="post" action="${base}/test">${csrf}
      <p>Sends a <code>webhook.test</code> event to the URL now.</p>${error('webhook_test')}
      <div class="actions"><button type="submit" class="secondary">Send test event</button></div></form>
    <h3 id="deliveries-title">Last deliveries</h3>
    ${view.deliveries.length === 0 ? html`<p class="muted">No delivery yet.</p>` : html`<table class="deliveries" aria-labelledby="deliveries-title">
      <thead><tr><th scope="col">Event and time</th><th scope="col">Status, attempts, latency</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
      <tbody>${view.deliveries.map((d) => deliveryRow(csrf, base, d))}</tbody></table>`}
    ${error('webhook_resend')}
    <h3>Remove</h3>
    <form method="post" action="${base}/delete" novalidate>${csrf}
      <p>No more events are sent to this application, and its signing secrets are deleted.</p>
      <label><input type="checkbox" name="confirm" value="yes" required ${invalid('webhook_remove')}>
        I understand, remove the webhook</label>
      ${error('webhook_remove')}
      <div class="actions"><button type="submit" class="danger">Remove webhook</button></div></form>` : ''}
  </div>`;
}

function deliveryRow(csrf: Html, base: string, d: WebhookDelivery): Html {
  const attempts = `${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}`;
  const code = d.lastStatusCode === undefined ? '' : ` (HTTP ${d.lastStatusCode})`;
  return html`<tr>
    <td><code>${d.eventType}</code><br><span class="muted">${readable(d.createdAt)}</span></td>
    <td>${STATUS_TEXT[d.status] ?? d.status}${code}<br><span class="muted">${attempts}${d.lastLatencyMs === undefined ? '' : ` · ${d.lastLatencyMs} ms`}</span></td>
    <td><form method="post" action="${base}/deliveries/${encodeURIComponent(d.webhookId)}">${csrf}
      <button type="submit" class="secondary small" aria-label="Send again: ${d.eventType} of ${readable(d.createdAt)}">Send again</button></form></td>
  </tr>`;
}
