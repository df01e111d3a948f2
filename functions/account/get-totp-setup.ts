import { newTotpSecret, totpUri } from '#shared/accounts/totp';
import { qrCodeDataUrl } from '#shared/views/qr-code';
import { totpSetupPage } from '#shared/views/security-pages';
import { factors } from '#shared/runtime';
import { allOf } from '#shared/data/batch-read';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { TOTP_ISSUER_NAME } from '#shared/pages/security';
import { redirect } from '#shared/http/responses';

/**
 * GET /account/security/totp — an authenticator app's enrolment: its QR code and key, and the form
 * for its first code. The enrolment's secret waits 15 minutes in the table (a reload shows the same
 * one); one BatchGetItem (session, user, and the user's factors and enrolment), and a PutItem when a
 * new enrolment starts. An account that has an app already goes back to the security page.
 */
export const handler = pageHandler({
  session: 'required', reads: { ofUser: (userId) => allOf([factors.factorsRead(userId), factors.totpEnrolmentRead(userId, new Date())]) }, loginReturn: thisPage,
}, async ({ signedIn, viewer, ofUser: [stored, enrolment] }) => {
  const { user } = signedIn;
  const now = new Date();
  if (stored.totp) return redirect('/account/security');
  let secret = enrolment;
  if (secret === undefined) {
    secret = newTotpSecret();
    await factors.startTotpEnrolment(user.id, secret, now);
  }
  const uri = totpUri(secret, user.email, TOTP_ISSUER_NAME);
  return totpSetupPage(viewer, { secret, uri, qrCode: qrCodeDataUrl(uri) });
});
