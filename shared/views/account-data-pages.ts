import { BACKUP_RETENTION_DAYS } from '#shared/data/table-schema';
import type { User } from '#shared/domain/user';
import type { HttpResult } from '#shared/http/responses';
import { csrfField, field, noticePage, render, type Viewer } from '#shared/views/account-pages';
import { html, type Html } from '#shared/views/html';

// The account's own data: the card of the account page that leads to the export and the deletion,
// the deletion's page, and what it says when done.

/**
 * A hidden field naming the account a form was shown for: a form opened under one sign-in and sent
 * under another (the browser signed out and in as someone else meanwhile) is refused, not applied
 * to the other account.
 */
export const accountField = (user: User) => html`<input type="hidden" name="account" value="${user.id}">`;

/** The account page's card: download my data, delete the account. */
export function accountDataCard(viewer: Viewer, user: User): Html {
  return html`<div class="card"><h2>Your data</h2>
    <p>Download everything the service stores about you (your profile, devices, the applications you authorized and develop, your sessions) as one JSON file. It holds no password, secret or token.</p>
    <form method="post" action="/account/export">${csrfField(viewer)}${accountField(user)}<button type="submit" class="secondary">Download my data</button></form>
    <p><a href="/account/delete">Delete the account</a></p></div>`;
}

export interface DeletePageState {
  error?: string;
  status?: number;
  /** Applications of the user that others use: the deletion is refused until they are deleted. */
  inUse?: readonly { clientId: string; name: string; users: number }[];
}

/** GET /account/delete: what goes, what stays (the backups), and the password to confirm. */
export function deleteAccountPage(viewer: Viewer, user: User, state: DeletePageState = {}): HttpResult {
  const inUse = state.inUse ?? [];
  return render(viewer, 'Delete the account', html`<div class="card"><h1>Delete the account</h1>
    <p>Deleting the account removes, at once and for good: your profile and e-mail address, your devices, your sessions, the applications you develop (with their webhooks), and the access of every application you have authorized (each is told that your account was deleted).</p>
    <p>The service's backups (DynamoDB point-in-time recovery) keep a copy of its data for ${BACKUP_RETENTION_DAYS} days; after that nothing of your account remains. You can sign up again with the same address at any time.</p>
    ${inUse.length > 0 ? html`<div role="alert"><p class="error">Other people use applications you develop. Delete them in the developer console first (their users lose their access):</p>
      <ul>${inUse.map((app) => html`<li><a href="/developer/apps/${encodeURIComponent(app.clientId)}">${app.name}</a> (${app.users} ${app.users === 1 ? 'person' : 'people'})</li>`)}</ul></div>` : ''}
    <form method="post" action="/account/delete" novalidate>${csrfField(viewer)}${accountField(user)}
      ${field({ name: 'password', label: 'Your password', type: 'password', error: state.error, autocomplete: 'current-password', required: true, hint: 'To confirm that it is you.' })}
      <div class="actions"><button type="submit" class="danger">Delete my account</button></div>
    </form><p><a href="/account">Keep my account</a></p></div>`, state.status);
}

/** GET /account/delete for an account whose deletion started and did not finish (its sessions open only this page). */
export function finishDeletionPage(viewer: Viewer, user: User): HttpResult {
  return render(viewer, 'Finish deleting the account', html`<div class="card"><h1>Finish deleting the account</h1>
    <p role="status">The deletion of your account started and did not finish. The account can no longer be used; finish its deletion now.</p>
    <form method="post" action="/account/delete">${csrfField(viewer)}${accountField(user)}
      <div class="actions"><button type="submit" class="danger">Finish deleting my account</button></div></form></div>`, 200);
}

/** What the deletion's form leads to (`?done=deleted`), signed out. */
export function accountDeletedPage(viewer: Viewer): HttpResult {
  return noticePage(viewer, 'Account deleted', `Your account has been deleted, and we sent a last e-mail to its address. The service's backups keep a copy of its data for ${BACKUP_RETENTION_DAYS} days.`, 200, { href: '/signup', text: 'Create an account' });
}
