import { securityPage, type SecurityOutcome } from '#shared/views/security-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { securityState } from '#shared/pages/security';
import { factors } from '#shared/runtime';

const OUTCOMES: readonly SecurityOutcome[] = ['totp-removed', 'passkey-added', 'passkey-removed', 'session-ended', 'others-signed-out'];

/**
 * GET /account/security — the account's sign-in settings: passkeys (listed, removable, and the form
 * that adds one), two-step sign-in (on since when, recovery codes left, the form that turns it off)
 * or the way to set it up, and the signed-in browsers (each other one can be signed out). One
 * BatchGetItem (session, user, and the user's factors), then securityState (Query of the passkeys,
 * Query of the sessions, at once). `?done=`: says what a form did.
 */
export const handler = pageHandler({
  session: 'required', reads: { ofUser: (userId) => factors.factorsRead(userId) }, loginReturn: '/account/security',
}, async ({ event, signedIn, viewer, ofUser }) => {
  const done = OUTCOMES.find((outcome) => outcome === event.queryStringParameters?.done);
  return securityPage(viewer, { ...(await securityState(signedIn.user.id, signedIn.sessionId, ofUser)), done });
});
