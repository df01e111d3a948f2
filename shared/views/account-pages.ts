import { webhookCard, type WebhookView } from '#shared/views/webhook-pages';
import { clientTypeOf, isPublicClient, PREVIOUS_SECRET_OVERLAP_SECONDS, previousSecretValidUntil, secretCreatedAt, type Client, type ClientType } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import type { Consent } from '#shared/domain/grant';
import { SCOPES, isScope } from '#shared/domain/scopes';
import type { User } from '#shared/domain/user';
import type { StoredMessage } from '#shared/email/outbox-mailer';
import { html, page, type Html } from '#shared/views/html';
import type { HttpResult } from '#shared/http/responses';
import { WEBHOOK_SECRET_OVERLAP_SECONDS } from '#shared/domain/webhook';

/** Who is looking at a page, for the header and the forms' CSRF fields. */
export interface Viewer {
  email?: string;
  csrf: string;
  cookies: string[];
}

interface FieldOptions {
  name: string;
  label: string;
  type?: string;
  value?: string;
  error?: string;
  autocomplete?: string;
  required?: boolean;
  hint?: string;
}

/** A labelled input with its error, described for assistive technology. */
export function field(o: FieldOptions): Html {
  const describedBy = [o.error ? `${o.name}-error` : '', o.hint ? `${o.name}-hint` : ''].filter(Boolean).join(' ');
  const input = o.type === 'textarea'
    ? html`<textarea id="${o.name}" name="${o.name}" ${o.required ? html`required` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${o.error ? html`aria-invalid="true"` : ''}>${o.value ?? ''}</textarea>`
    : html`<input id="${o.name}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}" ${o.autocomplete ? html`autocomplete="${o.autocomplete}"` : ''} ${o.required ? html`required` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${o.error ? html`aria-invalid="true"` : ''}>`;
  return html`<label for="${o.name}">${o.label}</label>${input}
    ${o.hint ? html`<p class="muted" id="${o.name}-hint">${o.hint}</p>` : ''}
    ${o.error ? html`<p class="error" id="${o.name}-error">${o.error}</p>` : ''}`;
}

const csrfField = (viewer: Viewer) => html`<input type="hidden" name="csrf" value="${viewer.csrf}">`;

function render(viewer: Viewer, title: string, body: Html, status?: number): HttpResult {
  return page({ title, body, status, cookies: viewer.cookies, signedInAs: viewer.email, csrf: viewer.csrf });
}

/** A page with one message (sent e-mails, done actions, expired links). */
export function noticePage(viewer: Viewer, title: string, message: string, status?: number, link?: { href: string; text: string }): HttpResult {
  return render(viewer, title, html`<div class="card"><h1>${title}</h1><p class="notice" role="status">${message}</p>
    ${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}</div>`, status);
}

/** What an account form did, said on the page its POST redirects to (POST-redirect-GET), named by `?done=`. */
export type AccountOutcome = 'signed-up' | 'reset-sent' | 'confirmed' | 'resent' | 'password-changed';

/** The page (GET) that says what a form did: where its POST redirects with 303, so a reload posts nothing again. */
export const outcomePath = (path: string, outcome: AccountOutcome): string => `${path}?done=${outcome}`;

/** The outcome a page's `?done=` names, if it is one of those the page says. */
export function outcomeOf<T extends AccountOutcome>(query: Record<string, string | undefined> | undefined, ...mine: T[]): T | undefined {
  return mine.find((outcome) => query?.done === outcome);
}

/** What a form did, once it is done. */
export function outcomePage(viewer: Viewer, outcome: AccountOutcome): HttpResult {
  switch (outcome) {
    case 'signed-up':
      return noticePage(viewer, 'Check your e-mail', 'We sent a message to the address you gave. Open the link in it to confirm your address, then sign in.', 200, { href: '/login', text: 'Sign in' });
    case 'reset-sent':
      return noticePage(viewer, 'Check your e-mail', 'If this address has an account, we sent it a link to choose a new password. The link works for one hour.');
    case 'confirmed':
      return noticePage(viewer, 'Address confirmed', 'Thank you: your e-mail address is confirmed.', 200, { href: '/account', text: 'Your account' });
    case 'resent':
      return noticePage(viewer, 'Check your e-mail', `We sent a new confirmation link to ${viewer.email ?? 'your address'}.`, 200, { href: '/account', text: 'Your account' });
    case 'password-changed':
      return noticePage(viewer, 'Password changed', 'Your new password is set. Sign in with it.', 200, { href: '/login', text: 'Sign in' });
  }
}

/** The answer to an e-mailed link that is unknown, expired or already used, with the way to get a new one. */
export function expiredLinkPage(viewer: Viewer, purpose: 'confirm-email' | 'reset-password'): HttpResult {
  return purpose === 'confirm-email'
    ? noticePage(viewer, 'Link expired', 'This confirmation link is invalid, expired or already used. Sign in to get a new one.', 400, { href: '/account', text: 'Your account' })
    : noticePage(viewer, 'Link expired', 'This reset link is invalid, expired or already used. Ask for a new one.', 400, { href: '/password-reset', text: 'Reset your password' });
}

export function signupPage(viewer: Viewer, values: Record<string, string> = {}, errors: Record<string, string> = {}, status?: number): HttpResult {
  const gender = values.gender ?? '0';
  return render(viewer, 'Create an account', html`<div class="card"><h1>Create an account</h1>
    <form method="post" action="/signup" novalidate>${csrfField(viewer)}
      ${field({ name: 'firstname', label: 'First name', value: values.firstname, error: errors.firstname, autocomplete: 'given-name', required: true })}
      ${field({ name: 'lastname', label: 'Last name', value: values.lastname, error: errors.lastname, autocomplete: 'family-name', required: true })}
      ${field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'email', required: true })}
      ${field({ name: 'password', label: 'Password', type: 'password', error: errors.password, autocomplete: 'new-password', required: true, hint: 'At least 10 characters. A short sentence is easy to remember and hard to guess.' })}
      <label for="gender">Gender (optional)</label>
      <select id="gender" name="gender">
        ${[['0', 'Prefer not to say'], ['1', 'Male'], ['2', 'Female']].map(([value, label]) =>
          html`<option value="${value}" ${value === gender ? html`selected` : ''}>${label}</option>`)}
      </select>
      <div class="actions"><button type="submit">Create account</button></div>
    </form><p class="muted">Already have an account? <a href="/login">Sign in</a></p></div>`, status);
}

export function confirmEmailPage(viewer: Viewer, token: string): HttpResult {
  return render(viewer, 'Confirm your e-mail address', html`<div class="card"><h1>Confirm your e-mail address</h1>
    <form method="post" action="/confirm-email">${csrfField(viewer)}<input type="hidden" name="token" value="${token}">
      <p>Press the button to confirm that this address is yours.</p>
      <div class="actions"><button type="submit">Confirm my address</button></div></form></div>`);
}

export function resetRequestPage(viewer: Viewer, values: Record<string, string> = {}): HttpResult {
  return render(viewer, 'Reset your password', html`<div class="card"><h1>Reset your password</h1>
    <form method="post" action="/password-reset">${csrfField(viewer)}
      ${field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, autocomplete: 'email', required: true })}
      <div class="actions"><button type="submit">Send me a reset link</button></div></form></div>`);
}

/**
 * The new-password form. Its checkbox `sign_out_apps` (checked unless the user unchecked it before
 * an error) also ends the access of every application the user authorized.
 */
export function newPasswordPage(viewer: Viewer, token: string, error?: string, status?: number, signOutApps = true): HttpResult {
  return render(viewer, 'Choose a new password', html`<div class="card"><h1>Choose a new password</h1>
    <form method="post" action="/password-reset/confirm">${csrfField(viewer)}<input type="hidden" name="token" value="${token}">
      ${field({ name: 'password', label: 'New password', type: 'password', error, autocomplete: 'new-password', required: true, hint: 'At least 10 characters.' })}
      <label><input type="checkbox" name="sign_out_apps" value="yes" aria-describedby="sign_out_apps-hint" ${signOutApps ? html`checked` : ''}>
        Also sign out every connected application</label>
      <p class="muted" id="sign_out_apps-hint">The applications you have authorized lose their access and must ask you again. You are signed out everywhere in any case.</p>
      <div class="actions"><button type="submit">Set new password</button></div></form></div>`, status);
}

export function accountPage(viewer: Viewer, user: User, authorized: { consent: Consent; client: Client }[]): HttpResult {
  const scopeList = (scopes: string[]) => html`<ul class="scopes">${scopes.map((s) => html`<li>${isScope(s) ? SCOPES[s] : s}</li>`)}</ul>`;
  return render(viewer, 'Your account', html`<div class="card"><h1>Your account</h1>
    <table><tbody>
      <tr><th scope="row">Name</th><td>${user.firstname} ${user.lastname}</td></tr>
      <tr><th scope="row">E-mail address</th><td>${user.email} ${user.email_confirmed ? html`<span class="muted">(confirmed)</span>` : html`<span class="error">(not confirmed)</span>`}</td></tr>
      <tr><th scope="row">Member since</th><td>${user.creation_date.slice(0, 10)}</td></tr>
    </tbody></table>
    ${user.email_confirmed ? '' : html`<form method="post" action="/confirm-email/resend">${csrfField(viewer)}<button type="submit" class="secondary">Send the confirmation e-mail again</button></form>`}
    </div>
    <div class="card"><h2>Applications you have authorized</h2>
    ${authorized.length === 0 ? html`<p class="muted">No application has access to your account.</p>` : html`<ul class="apps">
      ${authorized.map(({ consent, client }) => html`<li><h3>${client.name}</h3>
        <p class="muted">Allowed on ${consent.grantedAt.slice(0, 10)} to:</p>${scopeList(consent.scopes)}
        <form method="post" action="/account/apps/${encodeURIComponent(consent.clientId)}/revoke">${csrfField(viewer)}<button type="submit" class="danger" aria-label="Revoke access of ${client.name}">Revoke access</button></form></li>`)}
    </ul>`}</div>`);
}

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
  const current = values ?? { name: app.name, description: app.description, website: app.website, redirect_uris: app.redirectUris.join('\n') };
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
    ${field({ name: 'redirect_uris', label: 'Redirect URIs (one per line)', type: 'textarea', value: values.redirect_uris, error: errors.redirectUris, required: true, hint: fixedType ? CLIENT_TYPES[fixedType].redirectHint : `${CLIENT_TYPES.confidential.label}: ${CLIENT_TYPES.confidential.redirectHint} ${CLIENT_TYPES.public.label}: ${CLIENT_TYPES.public.redirectHint}` })}
    <div class="actions"><button type="submit">${submit}</button></div></form>`;
}

export function outboxPage(viewer: Viewer, messages: StoredMessage[], dir: string): HttpResult {
  const linkify = (text: string) => text.split(/(https?:\/\/\S+)/).map((part) =>
    (/^https?:\/\//.test(part) ? html`<a href="${part}">${part}</a>` : html`${part}`));
  return render(viewer, 'Local outbox', html`<div class="card"><h1>Local outbox</h1>
    <p class="muted">E-mail the local service would have sent, newest first (files in <code>${dir}</code>). Not deployed to AWS.</p></div>
    ${messages.map((m) => html`<article class="card"><h2>${m.subject}</h2><p class="muted">To ${m.to}, ${m.sentAt}</p>
      <p class="pre">${linkify(m.text)}</p></article>`)}`);
}
