import type { Client } from '#shared/domain/client';
import type { Device } from '#shared/domain/device';
import type { Consent } from '#shared/domain/grant';
import { SCOPES, isScope } from '#shared/domain/scopes';
import { html } from '#shared/views/html';
import type { HttpResult } from '#shared/http/responses';
import { csrfField, render, type Viewer } from '#shared/views/account-pages';
import { asksForDevices, deviceChoiceFieldset } from '#shared/views/oauth-pages';

/** A grant's page on the account page: what one application may do, and the form that changes it. */
export function grantPage(viewer: Viewer, grant: {
  client: Client; consent: Consent; owned?: readonly Device[]; lastUse?: Date; error?: string; status?: number;
}): HttpResult {
  const { client, consent } = grant;
  const base = `/account/apps/${encodeURIComponent(client.clientId)}`;
  return render(viewer, client.name, html`<div class="card"><h1>${client.name}</h1>
    <p><strong>${client.name}</strong>, by ${client.developerName} (<a href="${client.website}" rel="noopener noreferrer">${client.website}</a>).</p>
    <p class="muted">Allowed on ${consent.grantedAt.slice(0, 10)}${consent.changedAt ? html`, changed on ${consent.changedAt.slice(0, 10)}` : ''}.
      ${grant.lastUse ? html`Last used on ${grant.lastUse.toISOString().slice(0, 10)}.` : html`Not in use: it holds no active access.`}</p>
    ${grant.error ? html`<p class="error" role="alert">${grant.error}</p>` : ''}
    <form method="post" action="${base}">${csrfField(viewer)}
      <input type="hidden" name="revision" value="${String(consent.revision ?? 0)}">
      <fieldset><legend>What ${client.name} may do</legend>
        ${consent.scopes.map((scope) => html`<label class="choice"><input type="checkbox" name="scope_${scope}" checked> ${isScope(scope) ? SCOPES[scope] : scope}</label>`)}
        <p class="muted">Leave a box unchecked to take that permission away. To take every permission away, revoke the access below.</p>
      </fieldset>
      ${grant.owned && asksForDevices(consent.scopes) ? deviceChoiceFieldset(grant.owned, consent, client.name) : ''}
      <div class="actions"><button type="submit">Save changes</button></div>
    </form>
    <p class="muted">A permission taken away ends at the application's next refresh of its access, within an hour at the latest; a device
      no longer shared disappears from what it sees at once.</p></div>
    <div class="card"><h2>Revoke</h2><form method="post" action="${base}/revoke">${csrfField(viewer)}
      <button type="submit" class="danger" aria-label="Revoke access of ${client.name}">Revoke access</button></form></div>
    <p><a href="/account">Back to your account</a></p>`, grant.status);
}
