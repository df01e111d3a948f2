import { auth, defineEndpoint } from '#shared/declaration';
import { factors, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/security/totp', 'page')],
  // The first step of turning two-step sign-in on: asked before the QR code, not after the app holds it.
  recentSignIn: true,
  needs: { table: [...pageReads, factors.factorsRead, factors.totpEnrolmentRead, factors.startTotpEnrolment] },
  sample: {
    status: 200,
    make: async (kit) => {
      await kit.totpEnrolment();
      return kit.page('GET /account/security/totp, signed in, an enrolment waiting: its QR code and key', { cookies: [await kit.session()] });
    },
  },
});
