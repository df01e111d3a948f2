import { csrfField, field, noticePage, render, type Viewer } from '#shared/views/account-pages';
import { webhookCard, type WebhookView } from '#shared/views/webhook-pages';
import { clientTypeOf, isPublicClient, PREVIOUS_SECRET_OVERLAP_SECONDS, previousSecretValidUntil, secretCreatedAt, type Client, type ClientType } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { WEBHOOK_SECRET_OVERLAP_SECONDS } from '#shared/domain/webhook';
import { html, type Html } from '#shared/views/html';
import type { HttpResult } from '#shared/http/responses';

// The developer console's pages: the list of one's applications with the registration form, an
// application's page (its registration, secret and webhook cards), its deletion, and the pages that
// show a new secret once.

/** The developer console: `api` is the resource API's URL (the audience), where the page sends developers. */
export function developerPage(viewer: Viewer, api: string, apps: Client[], values: Record<string, string> = {}, errors: Record<string, string> = {}, status?: number): HttpResult {
  return render(viewer, 'Developer console', html`<div class="card"><h1>Developer console</h1>
    <p>Applications call the API at <code>${api}</code>: its operations, scopes and errors are in the <a href="${api}/docs">API reference</a>.</p>
    <h2>Your applications</h2>
    ${apps.length === 0 ? html`<p class="muted">You have not registered an application yet.</p>` : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Client ID</th></tr></thead><tbody>
      ${apps.map((app) => html`<tr><td><a href="/developer/apps/${encodeURIComponent(app.clientId)}">${app.name}</a></td><td><code>${app.clientId}</code></td></tr>`)}</tbody></table>`}
    </div><div class="card"><h2>Register an application</h2>
    ${registrationForm(viewer, '/developer/apps', 'Register', values, errors)}</div>`, status);
}

export function appPage(viewer: Viewer, app: Client, values?: Record<string, string>, errors: Record<string, string> = {}, status?: number, webhook: WebhookView = { deliveries: [] }): HttpResult {
  const current = values ?? {
    name: app.name, description: app.description, website: app.website, redirect_uris: app.redirectUris.join('\n'), ...(app.deviceFlow ? { device_flow: 'on' } : {}),
  };
  const base = `/developer/apps/${encodeURIComponent(app.clientId)}`;
  return render(viewer, app.name, html`<div class="card"><h1>${app.name}</h1>
    <p>Client ID: <code>${app.clientId}</code></p>
    <p id="client-type">${CLIENT_TYPES[clientTypeOf(app)].label}.</p>
    <p class="muted">Registered ${app.createdAt.slice(0, 10)}.</p></div>
    ${isPublicClient(app) ? publicClientCard() : secretCard(viewer, app, base, errors)}
    ${webhookCard(csrfField(viewer), app.clientId, webhook)}
    <div class="card"><h2>Edit</h2>${registrationForm(viewer, base, 'Save changes', current, errors, clientTypeOf(app))}</div>
    <div class="card"><h2>Delete</h2><p>Deleting the application ends every access its users gave it.</p>
      <p><a href="${base}/delete">Delete this application…</a></p></div>
    <p><a href="/developer">Back to your applications</a></p>`, status);
}

/** A server application's client secret: when it was made, the previous one during its overlap, and the rotation form. */
function secretCard(viewer: Viewer, app: Client, base: string, errors: Record<string, string>): Html {
  const previousUntil = previousSecretValidUntil(app, new Date());
  const overlapDays = PREVIOUS_SECRET_OVERLAP_SECONDS / 86_400;
  return html`<div class="card"><h2>Client secret</h2>
    <p id="current-secret">Current secret created ${readableTime(secretCreatedAt(app))}. It was shown once; you can replace it.</p>
    ${previousUntil ? html`<p class="notice" id="previous-secret">The previous secret still works until ${readableTime(formatTimestamp(previousUntil))}.
      Retire it as soon as your application uses the current one.</p>
      <form method="post" action="${base}/secret/retire">${csrfField(viewer)}<button type="submit" class="danger">Retire the previous secret now</button></form>` : ''}
    <form method="post" action="${base}/secret" novalidate>${csrfField(viewer)}
      <p>A new secret replaces the current one. The current one keeps working for ${overlapDays} more days, or until you retire it,
        so you can put the new one in your application first.${previousUntil ? ' The previous secret stops working at once.' : ''}</p>
      <label><input type="checkbox" name="confirm" value="yes" required ${errors.confirm ? html`aria-invalid="true" aria-describedby="confirm-error"` : ''}>
        I understand, generate a new secret</label>
      ${errors.confirm ? html`<p class="error" id="confirm-error">${errors.confirm}</p>` : ''}
      <div class="actions"><button type="submit" class="secondary">Generate a new client secret</button></div></form></div>`;
}

/** What a native or browser application uses instead of a secret. */
function publicClientCard(): Html {
  return html`<div class="card"><h2>No client secret</h2>
    <p id="no-secret">A native or browser application runs on its users' devices, where a secret cannot stay secret, so it has none.
      It sends its client ID without a secret to the token and revocation endpoints, and PKCE (S256) with every authorization request.</p>
    <p class="muted">Its pages may call the token and revocation endpoints from the origins of its https and loopback redirect URIs (CORS).</p></div>`;
}

/** The confirmation a deletion asks for: the application's name, typed. */
export function deleteAppPage(viewer: Viewer, app: Client, error?: string, status?: number): HttpResult {
  const base = `/developer/apps/${encodeURIComponent(app.clientId)}`;
  return render(viewer, `Delete ${app.name}?`, html`<div class="card"><h1>Delete ${app.name}?</h1>
    <p>This deletes the application and ends every access its users gave it: its refresh tokens stop working at once, and
      access tokens already issued expire within the hour. It cannot be undone.</p>
    <form method="post" action="${base}/delete" novalidate>${csrfField(viewer)}
      ${field({ name: 'confirm_name', label: `Type the application’s name, ${app.name}, to confirm`, error, required: true, autocomplete: 'off' })}
      <div class="actions"><button type="submit" class="danger">Delete this application</button></div></form>
    <p><a href="${base}">Cancel</a></p></div>`, status);
}

/** The new secret, shown once after a registration or a rotation. */
export function secretPage(viewer: Viewer, app: Client, secret: string, isNew: boolean): HttpResult {
  const previousUntil = previousSecretValidUntil(app, new Date());
  return render(viewer, 'Client credentials', html`<div class="card"><h1>${isNew ? 'Application registered' : 'New client secret'}</h1>
    <p>Client ID: <code id="client-id">${app.clientId}</code></p>
    <p>Client secret (shown only this once; store it in your server's configuration now):</p>
    <p><code class="secret" id="client-secret">${secret}</code></p>
    ${isNew || !previousUntil ? '' : html`<p class="notice">The previous secret keeps working until ${readableTime(formatTimestamp(previousUntil))}, or until you retire it on the application’s page.</p>`}
    <p><a href="/developer/apps/${encodeURIComponent(app.clientId)}">Continue</a></p></div>`);
}

/** The new webhook signing secret, shown once after the webhook's registration or a rotation. */
export function webhookSecretPage(viewer: Viewer, app: Client, secret: string, isNew: boolean): HttpResult {
  return render(viewer, 'Webhook signing secret', html`<div class="card"><h1>${isNew ? 'Webhook registered' : 'New webhook signing secret'}</h1>
    <p>Application: ${app.name} (<code>${app.clientId}</code>)</p>
    <p>Signing secret (shown only this once; give it to your receiver now, which verifies every delivery with it):</p>
    <p><code class="secret" id="webhook-signing-secret">${secret}</code></p>
    ${isNew ? '' : html`<p class="notice">The previous secret also signs every delivery for ${WEBHOOK_SECRET_OVERLAP_SECONDS / 3600} more hours, so your receiver keeps accepting them while you switch it over.</p>`}
    <p><a href="/developer/apps/${encodeURIComponent(app.clientId)}#webhook">Continue</a></p></div>`);
}

/** The secret page once its secret was shown (a reload, or another tab): it is never shown again. */
export function secretShownPage(viewer: Viewer, app: Client): HttpResult {
  return noticePage(viewer, 'Client secret already shown',
    'A client secret is shown only once, right after it is created, and this one can no longer be shown. If you did not store it, generate a new one on the application’s page.',
    200, { href: `/developer/apps/${encodeURIComponent(app.clientId)}`, text: `Back to ${app.name}` });
}

/** A stored timestamp (UTC) as people read it, to the minute. */
const readableTime = (timestamp: string) => `${timestamp.slice(0, 10)} ${timestamp.slice(11, 16)} UTC`;

/** The two kinds of application a developer registers, as the console names them (RFC 6749 §2.1 client types). */
const CLIENT_TYPES: Readonly<Record<ClientType, { label: string; hint: string; redirectHint: string }>> = {
  confidential: {
    label: 'Server application',
    hint: 'Runs on your server, which keeps a client secret.',
    redirectHint: 'https only; http is allowed for localhost, 127.0.0.1 and [::1].',
  },
  public: {
    label: 'Native or browser application',
    hint: 'A phone, desktop or single-page application: no client secret, and PKCE on every authorization.',
    redirectHint: 'https; http only on 127.0.0.1 or [::1], with any port (not localhost); or a private-use scheme such as com.example.app:/callback.',
  },
};

/**
 * The registration form; `fixedType`: an edit of an application of that type (chosen at registration,
 * never changed), else the choice of the kind of application.
 */
function registrationForm(viewer: Viewer, action: string, submit: string, values: Record<string, string>, errors: Record<string, string>, fixedType?: ClientType): Html {
  const chosen: ClientType = fixedType ?? (values.client_type === 'public' ? 'public' : 'confidential');
  const choice = (type: ClientType) => html`<label class="choice"><input type="radio" name="client_type" value="${type}" ${chosen === type ? html`checked` : ''}
      aria-describedby="client_type-${type}-hint"> ${CLIENT_TYPES[type].label}</label>
    <p class="muted" id="client_type-${type}-hint">${CLIENT_TYPES[type].hint}</p>`;
  return html`<form method="post" action="${action}" novalidate>${csrfField(viewer)}
    ${field({ name: 'name', label: 'Application name', value: values.name, error: errors.name, required: true })}
    ${fixedType ? '' : html`<fieldset ${errors.clientType ? html`aria-describedby="client_type-error"` : ''}><legend>Kind of application</legend>
      ${choice('confidential')}${choice('public')}
      ${errors.clientType ? html`<p class="error" id="client_type-error">${errors.clientType}</p>` : ''}</fieldset>`}
    ${field({ name: 'description', label: 'Description (shown to users)', type: 'textarea', value: values.description, error: errors.description })}
    ${field({ name: 'website', label: 'Website', type: 'url', value: values.website, error: errors.website, required: true })}
    ${field({ name: 'redirect_uris', label: 'Redirect URIs (one per line)', type: 'textarea', value: values.redirect_uris, error: errors.redirectUris, hint: fixedType ? CLIENT_TYPES[fixedType].redirectHint : `${CLIENT_TYPES.confidential.label}: ${CLIENT_TYPES.confidential.redirectHint} ${CLIENT_TYPES.public.label}: ${CLIENT_TYPES.public.redirectHint}` })}
    <label class="choice"><input type="checkbox" name="device_flow" ${values.device_flow === 'on' ? html`checked` : ''} aria-describedby="device_flow-hint"> Devices without a browser (device flow)</label>
    <p class="muted" id="device_flow-hint">For a TV, a hub or a command-line tool: it shows a code that its user enters at <code>/device</code> on a phone or computer (RFC 8628). An application that uses only this flow needs no redirect URI.</p>
    <div class="actions"><button type="submit">${submit}</button></div></form>`;
}
