import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, passkeys } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/passkeys/{passkey_id}/remove', 'page')],
  // Changes how the account signs in: only for a sign-in of the last minutes (the page middleware checks).
  recentSignIn: true,
  needs: { table: [...pageReads, passkeys.removePasskey] },
  sample: {
    status: 404,
    make: async (kit) => kit.page('POST /account/security/passkeys/{passkey_id}/remove of a passkey the demo user does not have: 404', {
      pathParameters: { passkey_id: 'A'.repeat(43) }, form: {}, cookies: [await kit.session()],
    }),
  },
});
