import { accountPage } from '#shared/auth/account-pages';
import { clients, grants } from '#shared/auth/runtime';
import { loginRedirect, pageContext } from '#shared/auth/web';
import { pageHandler } from '#shared/http/page-handler';

/** GET /account — the profile and the applications the user has authorized. */
export const handler = pageHandler(async (event) => {
  const { signedIn, viewer } = await pageContext(event);
  if (!signedIn) return loginRedirect('/account');
  const consents = await grants.listConsentsByUser(signedIn.user.id);
  const authorized = await Promise.all(consents.map(async (consent) => ({ consent, client: await clients.getClient(consent.clientId) })));
  return accountPage(viewer, signedIn.user, authorized);
});
