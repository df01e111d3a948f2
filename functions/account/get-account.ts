import { accountPage } from '#shared/views/account-pages';
import { accountDataCard } from '#shared/views/account-data-pages';
import { batch, clients, grants } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { authorizedApps } from '#shared/oauth/app-access';

/**
 * GET /account — the profile and the applications the user has authorized: one BatchGetItem
 * (session, user), then authorizedApps: one Query (consents), one BatchGetItem (their applications).
 */
export const handler = pageHandler({ session: 'required', loginReturn: '/account' }, async ({ signedIn, viewer }) =>
  accountPage(viewer, signedIn.user, await authorizedApps({ batch, clients, grants }, signedIn.user.id), [accountDataCard(viewer, signedIn.user)]));
