import { securityPage } from '#shared/views/security-pages';
import { passkeys } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { RECENT_SIGN_IN_SECONDS, securityState } from '#shared/pages/security';
import { NotFoundError } from '#shared/errors';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/passkeys/{passkey_id}/remove — removes one of the user's passkeys (its id is
 * the hash of its credential id), which asks for a recent sign-in: a session started more than 10
 * minutes ago gets the security page saying to sign in again first (403), with nothing removed.
 * Removed: one TransactWriteItems (passkey, claim, count), 303 to ?done=passkey-removed; another
 * user's or an unknown passkey: 404.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ event, signedIn, viewer }) => {
  const passkeyId = event.pathParameters?.passkey_id ?? '';
  if (Date.now() / 1000 - signedIn.signedInAt > RECENT_SIGN_IN_SECONDS) {
    return securityPage(viewer, {
      ...(await securityState(signedIn.user.id, signedIn.sessionId)), status: 403, signInAgain: true,
      passkeyListError: 'To remove a passkey, sign in again first: your last sign-in was more than 10 minutes ago.',
    });
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(passkeyId) || !(await passkeys.removePasskey(signedIn.user.id, passkeyId))) {
    throw new NotFoundError('You have no such passkey.');
  }
  return redirect('/account/security?done=passkey-removed', 303);
});
