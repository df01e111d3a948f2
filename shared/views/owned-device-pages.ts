import type { Device } from '#shared/domain/device';
import { html } from '#shared/views/html';
import { csrfField, render, type Viewer } from '#shared/views/account-pages';
import type { HttpResult } from '#shared/http/responses';

// The account's devices page: the devices the user owns, each removable, and the form that adds one
// with its claim code (shared/devices/claiming.ts).

/** What a devices form did, said on the page its POST redirects to (`?done=`). */
export type DevicesOutcome = 'added' | 'removed';

const DONE: Record<DevicesOutcome, string> = {
  added: 'The device is added to your account. Applications that you let see devices you add later see it too.',
  removed: 'The device is removed from your account: no application sees it any more and it can no longer connect. Once reset, it gets a new claim code for its next owner.',
};

/** The devices page; `error` and `status`: a refused form, with the code it was given (trimmed). */
export function ownedDevicesPage(viewer: Viewer, state: {
  devices: Device[]; done?: DevicesOutcome; error?: string; status?: number; claimCode?: string; notFound?: boolean;
}): HttpResult {
  const { devices, done, error } = state;
  return render(viewer, 'Your devices', html`<div class="card"><h1>Your devices</h1>
    ${done ? html`<p class="notice" role="status">${DONE[done]}</p>` : ''}
    ${state.notFound ? html`<p class="error" role="alert">That device is not one of yours: it may have been removed already.</p>` : ''}
    ${devices.length === 0 ? html`<p class="muted">No device belongs to your account yet.</p>` : html`<ul class="apps devices">
      ${devices.map((device) => html`<li><h3>${device.name}</h3><p class="muted">${device.place} · ${device.connected ? 'connected' : 'not connected'}</p>
        <form method="post" action="/account/devices/${encodeURIComponent(device.id)}/remove">${csrfField(viewer)}
          <button type="submit" class="danger" aria-label="Remove ${device.name}">Remove</button></form></li>`)}
    </ul>`}</div>
    <div class="card"><h2>Add a device</h2>
    <p>Enter the claim code printed on your device (or the one it shows). A code adds one device, once.</p>
    <form method="post" action="/account/devices/claim">${csrfField(viewer)}
      <label for="claim_code">Claim code</label>
      <input id="claim_code" name="claim_code" type="text" required maxlength="64" autocomplete="off" autocapitalize="characters" spellcheck="false"
        placeholder="BCDF-GHJK-LMNP-QRST" value="${state.claimCode ?? ''}" ${error ? html`aria-invalid="true" aria-describedby="claim_code-error"` : ''}>
      ${error ? html`<p class="error" id="claim_code-error" role="alert">${error}</p>` : ''}
      <div class="actions"><button type="submit">Add the device</button></div>
    </form>
    <p><a href="/account">Back to your account</a></p></div>`, state.status);
}
