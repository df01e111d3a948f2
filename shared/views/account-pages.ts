import type { Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';
import { SCOPES, isScope } from '#shared/domain/scopes';
import type { User } from '#shared/domain/user';
import type { StoredMessage } from '#shared/email/outbox-mailer';
import { html, page, type Html } from '#shared/views/html';
import type { HttpResult } from '#shared/http/responses';

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
  /** The keyboard a phone shows: `numeric` for a field of digits only. */
  inputmode?: 'numeric';
  required?: boolean;
  hint?: string;
}

/** A labelled input with its error, described for assistive technology. */
export function field(o: FieldOptions): Html {
  const describedBy = [o.error ? `${o.name}-error` : '', o.hint ? `${o.name}-hint` : ''].filter(Boolean).join(' ');
  const input = o.type === 'textarea'
    ? html`<textarea id="${o.name}" name="${o.name}" ${o.required ? html`required` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${o.error ? html`aria-invalid="true"` : ''}>${o.value ?? ''}</textarea>`
    : html`<input id="${o.name}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}" ${o.autocomplete ? html`autocomplete="${o.autocomplete}"` : ''} ${o.inputmode ? html`inputmode="${o.inputmode}"` : ''} ${o.required ? html`required` : ''} ${describedBy ? html`aria-describedby="${describedBy}"` : ''} ${o.error ? html`aria-invalid="true"` : ''}>`;
  return html`<label for="${o.name}">${o.label}</label>${input}
    ${o.hint ? html`<p class="muted" id="${o.name}-hint">${o.hint}</p>` : ''}
    ${o.error ? html`<p class="error" id="${o.name}-error">${o.error}</p>` : ''}`;
}

export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="csrf" value="${viewer.csrf}">`;

/** A page in the layout, with the viewer's header. */
export function render(viewer: Viewer, title: string, body: Html, status?: number, script?: string): HttpResult {
  return page({ title, body, status, cookies: viewer.cookies, signedInAs: viewer.email, csrf: viewer.csrf, script });
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

/** The account page; `more`: cards of other views after the applications (the account's data: account-data-pages.ts). */
export function accountPage(viewer: Viewer, user: User, authorized: { consent: Consent; client: Client }[], more: Html[] = []): HttpResult {
  const scopeList = (scopes: string[]) => html`<ul class="scopes">${scopes.map((s) => html`<li>${isScope(s) ? SCOPES[s] : s}</li>`)}</ul>`;
  return render(viewer, 'Your account', html`<div class="card"><h1>Your account</h1>
    <table><tbody>
      <tr><th scope="row">Name</th><td>${user.firstname} ${user.lastname}</td></tr>
      <tr><th scope="row">E-mail address</th><td>${user.email} ${user.email_confirmed ? html`<span class="muted">(confirmed)</span>` : html`<span class="error">(not confirmed)</span>`}</td></tr>
      <tr><th scope="row">Member since</th><td>${user.creation_date.slice(0, 10)}</td></tr>
    </tbody></table>
    ${user.email_confirmed ? '' : html`<form method="post" action="/confirm-email/resend">${csrfField(viewer)}<button type="submit" class="secondary">Send the confirmation e-mail again</button></form>`}
    <p><a href="/account/security">Sign-in and security</a> (two-step sign-in)</p>
    <p><a href="/account/devices">Your devices</a> (add one with its claim code)</p>
    </div>
    <div class="card"><h2>Applications you have authorized</h2>
    ${authorized.length === 0 ? html`<p class="muted">No application has access to your account.</p>` : html`<ul class="apps">
      ${authorized.map(({ consent, client }) => html`<li><h3>${client.name}</h3>
        <p class="muted">Allowed on ${consent.grantedAt.slice(0, 10)} to:</p>${scopeList(consent.scopes)}
        <p><a href="/account/apps/${encodeURIComponent(consent.clientId)}">Change what ${client.name} may do</a></p>
        <form method="post" action="/account/apps/${encodeURIComponent(consent.clientId)}/revoke">${csrfField(viewer)}<button type="submit" class="danger" aria-label="Revoke access of ${client.name}">Revoke access</button></form></li>`)}
    </ul>`}</div>${more}`);
}

export function outboxPage(viewer: Viewer, messages: StoredMessage[], dir: string): HttpResult {
  const linkify = (text: string) => text.split(/(https?:\/\/\S+)/).map((part) =>
    (/^https?:\/\//.test(part) ? html`<a href="${part}">${part}</a>` : html`${part}`));
  return render(viewer, 'Local outbox', html`<div class="card"><h1>Local outbox</h1>
    <p class="muted">E-mail the local service would have sent, newest first (files in <code>${dir}</code>). Not deployed to AWS.</p></div>
    ${messages.map((m) => html`<article class="card"><h2>${m.subject}</h2><p class="muted">To ${m.to}, ${m.sentAt}</p>
      <p class="pre">${linkify(m.text)}</p></article>`)}`);
}
