import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, renewRecoveryCodes } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/recovery-codes', 'page')],
  // Replaces a second factor: only for a sign-in of the last minutes (the page middleware checks).
  recentSignIn: true,
  needs: { table: [...pageReads, ...renewRecoveryCodes] },
  sample: {
    // The demo user has no authenticator app: nothing is written, and the page goes back to the security page.
    status: 303,
    make: async (kit) => kit.page('POST /account/security/recovery-codes without an authenticator app: back to the security page (303), nothing written', {
      form: {}, cookies: [await kit.session()],
    }),
  },
});
