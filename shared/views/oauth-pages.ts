import type { Client } from '#shared/domain/client';
import { SCOPES, isScope } from '#shared/domain/scopes';
import type { Device } from '#shared/domain/device';
import { deviceVisible, restrictsDevices, type DeviceChoice } from '#shared/domain/grant';
import { html, page, type Html } from '#shared/views/html';
import { PASSKEY_SCRIPT_PATH } from '#shared/views/passkey-ui';
import type { HttpResult } from '#shared/http/responses';
import { AUTHORIZE_PARAMS, type AuthorizationRequest } from '#shared/domain/authorization-request';

/**
 * The passkey sign-in: a form the page's script sends with the browser's answer, and its button.
 * Hidden until the script finds WebAuthn (shared/views/passkey-ui.ts); `autofill`: the browser's
 * autofill offers the passkeys on the page's e-mail field too.
 */
export function passkeySignIn(options: { csrf: string; returnTo: string; label: string; autofill: boolean; secondStep?: boolean }): Html {
  return html`<div id="passkey-area" hidden>
    <form id="passkey-sign-in" method="post" action="/login/passkey" data-options="/login/passkey/options" data-autofill="${options.autofill ? 'yes' : 'no'}">
      <input type="hidden" name="csrf" value="${options.csrf}">
      <input type="hidden" name="return_to" value="${options.returnTo}">
      <input type="hidden" name="response" value="">
      ${options.secondStep ? html`<input type="hidden" name="second_step" value="yes">` : ''}
      <div class="actions"><button type="button" id="passkey-button" class="secondary">${options.label}</button></div>
    </form>
    <p class="error" id="passkey-error" role="alert" hidden></p></div>`;
}

/** The login form, and the passkey sign-in. */
export function loginPage(options: {
  returnTo: string; csrf: string; cookies: string[]; error?: string; email?: string; status?: number; formTargets?: string[];
  /** Why the user is asked to sign in (a change that asks for a recent sign-in). */
  notice?: string;
}): HttpResult {
  return page({
    title: 'Sign in',
    status: options.status,
    cookies: options.cookies,
    formTargets: options.formTargets,
    script: PASSKEY_SCRIPT_PATH,
    body: html`<div class="card"><h1>Sign in</h1>
      ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
      <form method="post" action="/login">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="return_to" value="${options.returnTo}">
        <label for="email">E-mail address</label>
        <input id="email" name="email" type="email" autocomplete="username webauthn" required value="${options.email ?? ''}">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required>
        <div class="actions"><button type="submit">Sign in</button></div>
      </form>
      ${passkeySignIn({ csrf: options.csrf, returnTo: options.returnTo, label: 'Use a passkey', autofill: true })}
      <p class="muted"><a href="/password-reset">Forgot your password?</a> · <a href="/signup">Create an account</a></p></div>`,
  });
}

/** The name of a device's checkbox in a consent form is this and the device's id. */
export const DEVICE_FIELD_PREFIX = 'device_';
/** The device choice's mode field: `all` (every device, now and later) or `chosen` (those checked). */
export const DEVICE_MODE_FIELD = 'devices';
type DeviceMode = 'all' | 'chosen';

/**
 * The device choice of a consent form: the mode, all devices now and later (when `choice` restricts
 * nothing, or there is none yet) or only those checked; then, in a disclosure that is open when the
 * choice is only some (so a long list keeps the page short otherwise), a checkbox per device of the
 * user (name and place), checked when `choice` shares it, and one for the devices added later
 * (checked unless the choice lists only some). Read back by shared/pages/device-choice.ts.
 */
export function deviceChoiceFieldset(devices: readonly Device[], choice: DeviceChoice | undefined, applicationName: string): Html {
  const mode: DeviceMode = restrictsDevices(choice) ? 'chosen' : 'all';
  const radio = (value: DeviceMode, label: string) =>
    html`<label class="choice"><input type="radio" name="${DEVICE_MODE_FIELD}" value="${value}" ${mode === value ? html`checked` : ''}> ${label}</label>`;
  return html`<fieldset><legend>Devices ${applicationName} may see</legend>
    <input type="hidden" name="choose_devices" value="1">
    ${radio('all', 'All my devices, and those I add later')}
    ${radio('chosen', 'Only the devices checked below')}
    <details class="devices" ${mode === 'chosen' ? html`open` : ''}><summary>Your devices (${devices.length.toLocaleString('en-US')})</summary>
    ${devices.length === 0 ? html`<p class="muted">You have no devices yet.</p>` : html`<div class="device-list">${devices.map((device) => html`<label class="choice">
      <input type="checkbox" name="${DEVICE_FIELD_PREFIX}${device.id}" ${deviceVisible(choice, device.id) ? html`checked` : ''}> ${device.name} <span class="muted">(${device.place})</span></label>`)}</div>`}
    <label class="choice"><input type="checkbox" name="share_later" ${choice?.onlyDevices ? '' : html`checked`}> Devices I add later</label>
    </details>
  </fieldset>`;
}

/** Whether a request's scopes concern devices, so that its consent form offers the device choice. */
export const asksForDevices = (scopes: readonly string[]) => scopes.some((scope) => scope === 'read_device' || scope === 'write_device');

/**
 * What a consent page says of a request: who asks (application, developer, website), for which
 * scopes (the new ones, then those already allowed), its description, and who decides.
 */
export function consentRequest(options: { client: Client; scopes: readonly string[]; alreadyGranted: readonly string[]; email: string }): Html {
  const { client } = options;
  const scopeItem = (scope: string) => html`<li>${isScope(scope) ? SCOPES[scope] : scope}</li>`;
  const newScopes = options.scopes.filter((s) => !options.alreadyGranted.includes(s));
  const kept = options.scopes.filter((s) => options.alreadyGranted.includes(s));
  return html`<p><strong>${client.name}</strong>, by ${client.developerName}
        (<a href="${client.website}" rel="noopener noreferrer">${client.website}</a>), asks to:</p>
      ${newScopes.length ? html`<ul class="scopes">${newScopes.map(scopeItem)}</ul>` : ''}
      ${kept.length ? html`<p class="muted">You already allowed it to:</p><ul class="scopes">${kept.map(scopeItem)}</ul>` : ''}
      ${client.description ? html`<p class="muted">${client.description}</p>` : ''}
      <p class="muted">You are signed in as ${options.email}. You can withdraw this permission at any time on your account page.</p>`;
}

/** A consent form's two answers. */
export const decisionButtons = html`<div class="actions">
          <button type="submit" name="decision" value="allow">Allow</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </div>`;

/** The consent page: who asks, for what, in plain words. */
export function consentPage(options: {
  client: Client; request: AuthorizationRequest; params: Record<string, string | undefined>;
  alreadyGranted: string[]; email: string; csrf: string; cookies: string[];
  /** The user's devices and the current choice, when the request asks for device scopes. */
  devices?: { owned: readonly Device[]; choice: DeviceChoice | undefined };
}): HttpResult {
  const { client, request } = options;
  return page({
    title: `Allow ${client.name}?`,
    cookies: options.cookies,
    signedInAs: options.email,
    csrf: options.csrf,
    formTargets: [formTarget(request.redirectUri)],
    body: html`<div class="card"><h1>Allow ${client.name} to access your account?</h1>
      ${consentRequest({ client, scopes: request.scopes, alreadyGranted: options.alreadyGranted, email: options.email })}
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="csrf" value="${options.csrf}">
        ${AUTHORIZE_PARAMS.filter((name) => options.params[name] !== undefined).map((name) =>
          html`<input type="hidden" name="${name}" value="${options.params[name]}">`)}
        ${options.devices ? deviceChoiceFieldset(options.devices.owned, options.devices.choice, client.name) : ''}
        ${decisionButtons}
      </form></div>`,
  });
}

/**
 * The CSP form-action source the consent form's redirect goes to: the redirect URI's origin, or for
 * a native application's private-use scheme (`com.example.app:/callback`, whose origin is opaque)
 * the scheme itself (`com.example.app:`), as registered (shared/domain/client.ts).
 */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}
