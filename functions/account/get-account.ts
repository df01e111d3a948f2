import { accountPage } from '#shared/views/account-pages';
import { batch, clients, grants } from '#shared/runtime';
import { loginRedirect, pageContext } from '#shared/accounts/session';
import { pageHandler } from '#shared/http/page-handler';

/**
 * GET /account — the profile and the applications the user has authorized: one BatchGetItem
 * (session, user), one Query (consents), one BatchGetItem (their applications).
 */
export const handler = pageHandler(async (event) => {
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect('/account');
  const consents = await grants.listConsentsByUser(signedIn.user.id);
  const [apps] = await batch.read([clients.clientsRead(consents.map((consent) => consent.clientId))]);
  // An application deleted since (its grants revoked with it) is no longer listed.
  const authorized = consents.flatMap((consent, i) => (apps[i] ? [{ consent, client: apps[i] }] : []));
  return accountPage(viewer, signedIn.user, authorized);
});
