import type { Client } from '#shared/domain/client';
import { formatUserCode } from '#shared/domain/device-authorization';
import type { Device } from '#shared/domain/device';
import type { DeviceChoice } from '#shared/domain/grant';
import { html, page } from '#shared/views/html';
import { consentRequest, decisionButtons, deviceChoiceFieldset } from '#shared/views/oauth-pages';
import type { HttpResult } from '#shared/http/responses';

// The pages of the device flow (RFC 8628 §3.3): enter the code a device shows, allow or deny, done.

interface SignedInPage {
  email: string;
  csrf: string;
  cookies: string[];
}

/** The form where the user types the code their device shows (pre-filled from verification_uri_complete). */
export function deviceCodePage(options: SignedInPage & { userCode?: string; error?: string; status?: number }): HttpResult {
  return page({
    title: 'Connect a device',
    status: options.status,
    cookies: options.cookies,
    signedInAs: options.email,
    csrf: options.csrf,
    body: html`<div class="card"><h1>Connect a device</h1>
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
      <p>Enter the code that your TV, hub or other device shows. Enter only a code from a device in front of you:
        whoever shows you a code gets access to your account.</p>
      <form method="post" action="/device">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <label for="user_code">Code</label>
        <input id="user_code" name="user_code" type="text" required maxlength="32" autocomplete="off" autocapitalize="characters"
          spellcheck="false" placeholder="BCDF-GHJK" value="${options.userCode ?? ''}">
        <div class="actions"><button type="submit">Continue</button></div>
      </form></div>`,
  });
}

/** The consent page of a device request: which application, for what, and the code to check against the device. */
export function deviceConsentPage(options: SignedInPage & {
  client: Client; scopes: string[]; alreadyGranted: string[]; userCode: string; status?: number;
  /** The user's devices and the current choice, when the request asks for device scopes. */
  devices?: { owned: readonly Device[]; choice: DeviceChoice | undefined };
}): HttpResult {
  const { client } = options;
  const code = formatUserCode(options.userCode);
  return page({
    title: `Allow ${client.name} on your device?`,
    status: options.status,
    cookies: options.cookies,
    signedInAs: options.email,
    csrf: options.csrf,
    body: html`<div class="card"><h1>Allow ${client.name} on your device?</h1>
      <p>Check that your device shows the code <strong>${code}</strong>. If it does not, or you did not start this on a device of yours, deny.</p>
      ${consentRequest({ client, scopes: options.scopes, alreadyGranted: options.alreadyGranted, email: options.email })}
      <form method="post" action="/device">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="user_code" value="${code}">
        ${options.devices ? deviceChoiceFieldset(options.devices.owned, options.devices.choice, client.name) : ''}
        ${decisionButtons}
      </form></div>`,
  });
}

/** After the decision: the device gets its answer at its next poll. */
export function deviceDonePage(options: SignedInPage & { clientName: string; allowed: boolean }): HttpResult {
  return page({
    title: options.allowed ? 'Device connected' : 'Request denied',
    cookies: options.cookies,
    signedInAs: options.email,
    csrf: options.csrf,
    body: options.allowed
      ? html`<div class="card"><h1>Device connected</h1>
        <p>${options.clientName} can now use your account on your device: it continues there within a few seconds. You can close this page.</p>
        <p class="muted">You can withdraw this permission at any time on your <a href="/account">account page</a>.</p></div>`
      : html`<div class="card"><h1>Request denied</h1>
        <p>${options.clientName} was not given access. Your device will say so within a few seconds.</p></div>`,
  });
}
