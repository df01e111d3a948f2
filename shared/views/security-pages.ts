import { html, page } from '#shared/views/html';
import { csrfField, field, render, type Viewer } from '#shared/views/account-pages';
import { passkeySignIn } from '#shared/views/oauth-pages';
import { PASSKEY_SCRIPT_PATH } from '#shared/views/passkey-ui';
import type { HttpResult } from '#shared/http/responses';

/** What a security form did, said on the security page its POST redirects to (`?done=`). */
export type SecurityOutcome = 'totp-removed' | 'passkey-added' | 'passkey-removed' | 'session-ended' | 'others-signed-out';

/** A signed-in browser as the security page lists it. */
export interface SessionRow {
  /** Its id in URLs: the hash of its cookie. */
  id: string;
  browser: string;
  address: string;
  createdAt: string;
  /** The browser looking at the page. */
  current: boolean;
}

/** A passkey as the security page lists it. */
export interface PasskeyListing {
  /** Its id in URLs: the hash of its credential id. */
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
}

/** The second step of a sign-in: the authenticator app's code, or a recovery code. */
export function secondFactorPage(options: {
  returnTo: string; csrf: string; cookies: string[]; error?: string; status?: number; formTargets?: string[];
  /** The e-mail address of the account signing in, when it was read. */
  account?: string;
}): HttpResult {
  return page({
    title: 'Two-step sign-in',
    status: options.status,
    cookies: options.cookies,
    formTargets: options.formTargets,
    script: PASSKEY_SCRIPT_PATH,
    body: html`<div class="card"><h1>Two-step sign-in</h1>
      ${options.account ? html`<p>Signing in as <strong id="signing-in-as">${options.account}</strong>.</p>` : ''}
      <p>Your password was right. Now enter the 6-digit code your authenticator app shows for this account.</p>
      ${options.error ? html`<p class="error" role="alert" id="code-error">${options.error}</p>` : ''}
      <form method="post" action="/login/second-factor">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="return_to" value="${options.returnTo}">
        <label for="code">Code</label>
        <input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required
          aria-describedby="code-hint${options.error ? ' code-error' : ''}" ${options.error ? html`aria-invalid="true"` : ''}>
        <p class="muted" id="code-hint">Lost your phone? Enter one of your recovery codes instead (like <code>abcd-efgh-jkmn-pqrs</code>).</p>
        <div class="actions"><button type="submit">Continue</button></div>
      </form>
      ${passkeySignIn({ csrf: options.csrf, returnTo: options.returnTo, label: 'Use a passkey instead', autofill: false, secondStep: true })}
      <p class="muted">${options.account ? 'Not you? ' : ''}<a href="/login">Start again</a></p></div>`,
  });
}

/** The account's sign-in settings: the authenticator app (set up or turned off with a fresh code) and the recovery codes left. */
export function securityPage(viewer: Viewer, state: {
  totp?: { enrolledAt: string }; recoveryCodesLeft: number;
  /** Few recovery codes are left (or none): the page warns, beside the way to make new ones. */
  recoveryCodesLow: boolean;
  passkeys: PasskeyListing[]; sessions: SessionRow[]; done?: SecurityOutcome; error?: string;
  passkeyError?: string; passkeyName?: string; status?: number;
}): HttpResult {
  const { totp } = state;
  const notices: Record<SecurityOutcome, string> = {
    'totp-removed': 'Two-step sign-in is off: your password alone signs you in now.',
    'passkey-added': 'Your passkey is added: use it to sign in.',
    'passkey-removed': 'The passkey is removed.',
    'session-ended': 'That browser is signed out.',
    'others-signed-out': 'Every other browser is signed out: only this one is still signed in.',
  };
  return render(viewer, 'Sign-in and security', html`<div class="card"><h1>Sign-in and security</h1>
    ${state.done ? html`<p class="notice" role="status">${notices[state.done]}</p>` : ''}
    ${state.error ? html`<p class="error" role="alert">Two-step sign-in is still on: <a href="#code">${state.error}</a></p>` : ''}
    <p><a href="/account">Back to your account</a></p></div>
    <div class="card" id="passkeys"><h2>Passkeys</h2>
    <p>A passkey signs you in with your device’s screen lock, fingerprint or face, without a password, and counts as your second step too.</p>
    ${state.passkeys.length === 0 ? html`<p class="muted">You have no passkey yet.</p>` : html`<ul class="apps">
      ${state.passkeys.map((p) => html`<li><h3>${p.name}</h3>
        <p class="muted">Added ${p.createdAt.slice(0, 10)}${p.lastUsedAt ? html`, last used ${p.lastUsedAt.slice(0, 10)}` : ''}</p>
        <form method="post" action="/account/security/passkeys/${p.id}/remove">${csrfField(viewer)}<button type="submit" class="danger small" aria-label="Remove passkey ${p.name}">Remove</button></form></li>`)}
    </ul>`}
    <form id="add-passkey" method="post" action="/account/security/passkeys" data-options="/account/security/passkeys/options" novalidate>${csrfField(viewer)}
      <input type="hidden" name="response" value="">
      ${field({ name: 'name', label: 'Name of the new passkey', value: state.passkeyName, error: state.passkeyError, required: true, hint: 'For example the device it is on: “Laptop”, “Phone”.' })}
      <div class="actions"><button type="submit">Add a passkey</button></div></form>
    <p class="error" id="add-passkey-error" role="alert" hidden></p></div>
    <div class="card"><h2>Two-step sign-in</h2>
    ${totp
      ? html`<p>On since ${totp.enrolledAt.slice(0, 10)}: after your password, we ask for the code of your authenticator app.</p>
        ${state.recoveryCodesLow
          ? html`<p class="error" role="alert" id="recovery-codes-low">Only ${state.recoveryCodesLeft} recovery code${state.recoveryCodesLeft === 1 ? '' : 's'} left: make new ones before you run out.</p>`
          : html`<p>${state.recoveryCodesLeft} recovery code${state.recoveryCodesLeft === 1 ? '' : 's'} left.</p>`}
        <form method="post" action="/account/security/recovery-codes">${csrfField(viewer)}
          <p class="muted" id="new-codes-hint">New codes replace the ones you have: those stop working.</p>
          <div class="actions"><button type="submit" aria-describedby="new-codes-hint">Make new recovery codes</button></div></form>
        <h3>Turn two-step sign-in off</h3>
        <form method="post" action="/account/security/totp/remove" novalidate>${csrfField(viewer)}
          ${field({ name: 'code', label: 'A code from your authenticator app, or a recovery code', error: state.error, autocomplete: 'one-time-code', required: true })}
          <div class="actions"><button type="submit" class="danger">Turn off</button></div></form>`
      : html`<p>Protect your account with a second step after your password: a code from an authenticator app on your phone.</p>
        <p><a class="button" href="/account/security/totp">Set up an authenticator app</a></p>`}
    </div>
    <div class="card" id="sessions"><h2>Signed-in browsers</h2>
    <p>Each browser signed in to your account now. Sign out any you do not recognise, then change your password.</p>
    <ul class="apps">${state.sessions.map((row) => html`<li><h3>${row.browser}${row.current ? html` <span class="muted">(this browser)</span>` : ''}</h3>
      <p class="muted">Signed in ${row.createdAt ? `${row.createdAt.slice(0, 16).replace('T', ' ')} UTC` : 'at an unknown time'}${row.address ? ` from ${row.address}` : ''}</p>
      ${row.current ? '' : html`<form method="post" action="/account/security/sessions/${row.id}/end">${csrfField(viewer)}<button type="submit" class="danger small" aria-label="Sign out ${row.browser}, signed in ${row.createdAt.slice(0, 16).replace('T', ' ')}">Sign out</button></form>`}</li>`)}
    </ul>
    ${state.sessions.some((row) => !row.current) ? html`<form method="post" action="/account/security/sessions/end-others">${csrfField(viewer)}
      <div class="actions"><button type="submit" class="danger">Sign out every other browser</button></div></form>` : ''}</div>`, state.status, PASSKEY_SCRIPT_PATH);
}

/** Enrolment of an authenticator app: its QR code and secret, and the first code to prove it works. */
export function totpSetupPage(viewer: Viewer, setup: { secret: string; uri: string; qrCode: string; error?: string; status?: number }): HttpResult {
  const grouped = setup.secret.match(/.{1,4}/g)!.join(' ');
  return render(viewer, 'Set up an authenticator app', html`<div class="card"><h1>Set up an authenticator app</h1>
    <ol>
      <li>Open your authenticator app and scan this code.
        <img src="${setup.qrCode}" width="200" height="200" alt="QR code to add this account to an authenticator app"></li>
      <li>Cannot scan? Type this key into the app instead: <code class="secret grouped" id="totp-secret">${grouped}</code>
        On the phone that has the app, <a href="${setup.uri}" id="totp-link">open the key in the app</a>.</li>
      <li>Enter the 6-digit code the app then shows.</li>
    </ol>
    <form method="post" action="/account/security/totp" novalidate>${csrfField(viewer)}
      ${field({ name: 'code', label: 'Code from the app', error: setup.error, autocomplete: 'one-time-code', inputmode: 'numeric', required: true })}
      <div class="actions"><button type="submit">Turn on two-step sign-in</button></div></form>
    <p class="muted"><a href="/account/security">Cancel</a></p></div>`, setup.status);
}

/** The recovery codes, shown once; or, when they were shown already, that they were. */
export function recoveryCodesPage(viewer: Viewer, codes: string[] | undefined): HttpResult {
  if (!codes) {
    return render(viewer, 'Recovery codes', html`<div class="card"><h1>Recovery codes</h1>
      <p class="notice" role="status">Your recovery codes were shown once already, and are not shown again.</p>
      <p><a href="/account/security">Sign-in and security</a></p></div>`);
  }
  return render(viewer, 'Your recovery codes', html`<div class="card"><h1>Your recovery codes</h1>
    <p class="notice" role="status">Two-step sign-in is on. These codes replace any you had before.</p>
    <p>If you lose your phone, each of these codes signs you in once in place of the app’s code. Keep them somewhere safe:
      <strong>they are shown only now</strong>.</p>
    <ul class="scopes" id="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
    <p><a class="button" href="/account/security">I have saved them</a></p></div>`);
}
