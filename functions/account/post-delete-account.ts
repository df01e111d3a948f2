import { ApplicationsInUseError } from '#shared/accounts/account-deletion';
import { confirmIdentity, deleteAccount } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { secureCookie } from '#shared/pages/session';
import { SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { redirect, type HttpResult } from '#shared/http/responses';
import { ConflictError } from '#shared/errors';
import { deleteAccountPage } from '#shared/views/account-data-pages';

/**
 * POST /account/delete — deletes the signed-in account (deleteAccount: every grant first, then
 * every item of the user, then the farewell e-mail), or finishes a deletion that stopped half-way.
 * Confirmed with the password (confirmIdentity, in the login throttle) after a sign-in of the last
 * 10 minutes (which passed the second factor, if the account has one: its declaration's
 * `recentSignIn`, which the page middleware checks); refused, with nothing changed, after an older
 * sign-in, without the password, with a wrong one, when a form shown for another account is sent, or while
 * other people use applications the user develops. Then 303 to `?done=deleted`, signed out.
 */
export const handler = pageHandler(
  { form: true, csrf: true, session: 'required', reads: { finishesDeletion: true }, loginReturn: '/account/delete' },
  async ({ event, form, signedIn, viewer }) => {
    const { user } = signedIn;
    if (form.account !== user.id) {
      throw new ConflictError('This form was opened for another account: you signed in as someone else since. Open the page again.');
    }
    const again = (state: Parameters<typeof deleteAccountPage>[2]) => deleteAccountPage(viewer, user, state);
    const inUseAnswer = (inUse: ApplicationsInUseError['applications']) =>
      again({ status: 409, inUse: inUse.map(({ client, users }) => ({ clientId: client.clientId, name: client.name, users })) });

    // A deletion already started (its marker is on the profile) was confirmed then: it is finished.
    // Applications others use refuse it after the password (deleteAccount checks them before anything is written).
    if (!signedIn.deleting) {
      if (!form.password) return again({ status: 400, error: 'Type your password to delete the account.' });
      const check = await confirmIdentity(user, { password: form.password, address: event.requestContext.http.sourceIp, now: Date.now() });
      if (check.outcome === 'throttled') {
        const result: HttpResult = again({ status: 429, error: `Too many failed attempts. Try again in ${check.retryAfterSeconds} second${check.retryAfterSeconds === 1 ? '' : 's'}.` });
        result.headers['retry-after'] = String(check.retryAfterSeconds);
        return result;
      }
      if (check.outcome === 'wrong-password') return again({ status: 401, error: 'Incorrect password. The account was not deleted.' });
    }
    try {
      await deleteAccount(user.id);
    } catch (error) {
      if (error instanceof ApplicationsInUseError) return inUseAnswer(error.applications);
      throw error;
    }
    return redirect('/account/delete?done=deleted', 303, [setCookie(SESSION_COOKIE, '', { secure: secureCookie(), maxAgeSeconds: 0 })]);
  },
);
