import { accountPage } from '#shared/views/account-pages';
import { accountDataCard } from '#shared/views/account-data-pages';
import { authorizedApps } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';

/**
 * GET /account — the profile and the applications the user has authorized: one BatchGetItem
 * (session, user), then authorizedApps: one Query (consents), one BatchGetItem (their applications).
 */
export const handler = pageHandler({ session: 'required', loginReturn: '/account' }, async ({ signedIn, viewer }) =>
  accountPage(viewer, signedIn.user, await authorizedApps(signedIn.user.id), [accountDataCard(viewer, signedIn.user)]));
