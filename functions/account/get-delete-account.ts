import { appsInUse } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { loginRedirect } from '#shared/pages/session';
import { accountDeletedPage, deleteAccountPage, finishDeletionPage } from '#shared/views/account-data-pages';

/**
 * GET /account/delete — the deletion's page: what goes and what the backups keep, the applications
 * of the user that others use (which stop it), and the password field. `?done=deleted`: the
 * deletion's outcome, signed out. A session of an account whose deletion did not finish (which
 * opens no other page) gets the button that finishes it. One BatchGetItem (session, user), then
 * applicationsInUse: one Query on GSI1, and one per application the user develops.
 */
export const handler = pageHandler({ session: 'optional', reads: { finishesDeletion: true } }, async ({ event, signedIn, viewer }) => {
  if (event.queryStringParameters?.done === 'deleted') return accountDeletedPage(viewer);
  if (!signedIn) return loginRedirect(event.rawPath);
  if (signedIn.deleting) return finishDeletionPage(viewer, signedIn.user);
  const inUse = await appsInUse(signedIn.user.id);
  return deleteAccountPage(viewer, signedIn.user, { inUse: inUse.map(({ client, users }) => ({ clientId: client.clientId, name: client.name, users })) });
});
