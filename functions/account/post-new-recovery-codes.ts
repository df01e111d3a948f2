import { renewRecoveryCodes } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { RECOVERY_CODES_PATH, RECOVERY_KEY_COOKIE } from '#shared/pages/security';
import { RECOVERY_REVEAL_SECONDS } from '#shared/data/factor-repo';
import { setCookie } from '#shared/http/cookies';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/recovery-codes — 10 new recovery codes, two-step sign-in staying on, after
 * a recent sign-in (its declaration's `recentSignIn`): renewRecoveryCodes (one TransactWriteItems;
 * the codes left stop working), then 303 to the codes, shown once, with the cookie of their key. An
 * account without an authenticator app: 303 to the security page, nothing written.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ signedIn }) => {
  const result = await renewRecoveryCodes(signedIn.user.id, Date.now());
  if (result.outcome === 'not-enrolled') return redirect('/account/security', 303);
  return redirect(RECOVERY_CODES_PATH, 303, [setCookie(RECOVERY_KEY_COOKIE, result.revealKey, { secure: secureCookie(), path: RECOVERY_CODES_PATH, maxAgeSeconds: RECOVERY_REVEAL_SECONDS })]);
});
