import { auth, defineEndpoint } from '#shared/declaration';
import { factors, pageReads, passkeys, removeAuthenticator, sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/totp/remove', 'page')],
  // Changes how the account signs in: only for a sign-in of the last minutes (the page middleware checks).
  recentSignIn: true,
  needs: { table: [...pageReads, ...removeAuthenticator, factors.factorsRead, passkeys.passkeysOf, sessions.sessionsOf] },
  sample: {
    // The demo user has no authenticator app: nothing to turn off, back to the security page.
    status: 303,
    make: async (kit) => kit.page('POST /account/security/totp/remove, signed in, no authenticator app: back to GET /account/security', {
      form: { code: '123456' }, cookies: [await kit.session()],
    }),
  },
});
