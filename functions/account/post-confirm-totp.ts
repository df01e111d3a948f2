import { totpUri } from '#shared/accounts/totp';
import { qrCodeDataUrl } from '#shared/views/qr-code';
import { totpSetupPage } from '#shared/views/security-pages';
import { enrolAuthenticator, factors } from '#shared/runtime';
import { secureCookie } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { RECOVERY_CODES_PATH, RECOVERY_KEY_COOKIE, TOTP_ISSUER_NAME } from '#shared/pages/security';
import { RECOVERY_REVEAL_SECONDS } from '#shared/data/factor-repo';
import { setCookie } from '#shared/http/cookies';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/totp — the enrolment's first code. Right: two-step sign-in is on
 * (enrolAuthenticator: one TransactWriteItems), and 303 to the recovery codes, shown once, with the
 * cookie of their key. Wrong: the same QR code again with the reason (400), nothing written. No
 * enrolment waiting (it expired): 303 to a new one. The enrolment is read with the session (one BatchGetItem).
 */
export const handler = pageHandler({
  form: true, csrf: true, session: 'required', reads: { ofUser: (userId) => factors.totpEnrolmentRead(userId, new Date()) }, loginReturn: '/account/security/totp',
}, async ({ form, signedIn, viewer, ofUser: secret }) => {
  const { user } = signedIn;
  const now = Date.now();
  if (secret === undefined) return redirect('/account/security/totp', 303);
  const result = await enrolAuthenticator(user.id, secret, form.code ?? '', now);
  if (result.outcome === 'already') return redirect('/account/security', 303);
  if (result.outcome === 'wrong') {
    const uri = totpUri(secret, user.email, TOTP_ISSUER_NAME);
    return totpSetupPage(viewer, {
      secret, uri, qrCode: qrCodeDataUrl(uri), status: 400,
      error: 'That code is not right. Enter the 6-digit code the app shows now for this account.',
    });
  }
  return redirect(RECOVERY_CODES_PATH, 303, [setCookie(RECOVERY_KEY_COOKIE, result.revealKey, { secure: secureCookie(), path: RECOVERY_CODES_PATH, maxAgeSeconds: RECOVERY_REVEAL_SECONDS })]);
});
