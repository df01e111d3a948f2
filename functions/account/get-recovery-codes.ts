import { openRecoveryCodes } from '#shared/accounts/second-factor';
import { recoveryCodesPage } from '#shared/views/security-pages';
import { factors } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { RECOVERY_CODES_PATH, RECOVERY_KEY_COOKIE } from '#shared/pages/security';
import { readCookie, setCookie } from '#shared/http/cookies';

/**
 * GET /account/security/recovery-codes — the recovery codes an enrolment just made, once: the
 * browser's key (a cookie of this path) opens them, and reading deletes them (one DeleteItem that
 * returns them), so a reload or another tab shows that they were shown. One BatchGetItem (session, user) first.
 */
export const handler = pageHandler({ session: 'required', loginReturn: thisPage }, async ({ event, signedIn, viewer }) => {
  const key = readCookie(event, RECOVERY_KEY_COOKIE);
  const shown = { ...viewer, cookies: [...viewer.cookies, ...(key === undefined ? [] : [setCookie(RECOVERY_KEY_COOKIE, '', { secure: secureCookie(), path: RECOVERY_CODES_PATH, maxAgeSeconds: 0 })])] };
  const sealed = key === undefined ? undefined : await factors.takeRecoveryReveal(signedIn.user.id, new Date());
  return recoveryCodesPage(shown, sealed === undefined ? undefined : openRecoveryCodes(key!, sealed));
});
