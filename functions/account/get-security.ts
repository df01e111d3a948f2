import { securityPage } from '#shared/views/security-pages';
import { batch, factors } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';

/**
 * GET /account/security — the account's sign-in settings: two-step sign-in (on since when, recovery
 * codes left, the form that turns it off) or the way to set it up. One BatchGetItem (session, user),
 * one BatchGetItem (the factors). `?done=totp-removed`: says it was turned off.
 */
export const handler = pageHandler({ session: 'required', loginReturn: '/account/security' }, async ({ event, signedIn, viewer }) => {
  const [stored] = await batch.read([factors.factorsRead(signedIn.user.id)] as const);
  const done = event.queryStringParameters?.done === 'totp-removed' ? 'totp-removed' : undefined;
  return securityPage(viewer, { totp: stored.totp, recoveryCodesLeft: stored.recoveryCodeHashes.length, done });
});
