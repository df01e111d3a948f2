import { auth, defineEndpoint } from '#shared/declaration';
import { PASSKEY_VERIFY_ENTRY } from '#shared/accounts/passkeys';
import { factors, pageReads, passkeys, registerPasskey, sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/passkeys', 'page')],
  // The WebAuthn library's checks, loaded when an answer is verified.
  lazyModules: [PASSKEY_VERIFY_ENTRY],
  // Changes how the account signs in: only for a sign-in of the last minutes (the page middleware checks).
  recentSignIn: true,
  needs: { table: [...pageReads, ...registerPasskey, factors.factorsRead, passkeys.passkeysOf, sessions.sessionsOf] },
  sample: {
    status: 400,
    make: async (kit) => kit.page('POST /account/security/passkeys without a browser’s answer: the security page with the reason (400)', {
      form: { name: 'Laptop', response: '' }, cookies: [await kit.session()],
    }),
  },
});
