import { auth, defineEndpoint } from '#shared/declaration';
import { enrolAuthenticator, factors, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/totp', 'page')],
  // Changes how the account signs in: only for a sign-in of the last minutes (the page middleware checks).
  recentSignIn: true,
  needs: { table: [...pageReads, factors.totpEnrolmentRead, ...enrolAuthenticator] },
  sample: {
    // A right code would turn two-step sign-in on for the demo user: a wrong one gets the page's refusal.
    status: 400,
    make: async (kit) => {
      await kit.totpEnrolment();
      return kit.page('POST /account/security/totp with a wrong first code: the QR code again with the reason (400)', {
        form: { code: 'not-a-code' }, cookies: [await kit.session()],
      });
    },
  },
});
