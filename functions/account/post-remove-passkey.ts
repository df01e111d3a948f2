import { passkeys } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { NotFoundError } from '#shared/errors';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/passkeys/{passkey_id}/remove — removes one of the user's passkeys (its id is
 * the hash of its credential id), after a recent sign-in (its declaration's `recentSignIn`: else the
 * page middleware sends the browser to sign in again, nothing removed).
 * Removed: one TransactWriteItems (passkey, claim, count), 303 to ?done=passkey-removed; another
 * user's or an unknown passkey: 404.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ event, signedIn }) => {
  const passkeyId = event.pathParameters?.passkey_id ?? '';
  if (!/^[A-Za-z0-9_-]{43}$/.test(passkeyId) || !(await passkeys.removePasskey(signedIn.user.id, passkeyId))) {
    throw new NotFoundError('You have no such passkey.');
  }
  return redirect('/account/security?done=passkey-removed', 303);
});
