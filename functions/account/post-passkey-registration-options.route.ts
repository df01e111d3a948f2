import { auth, defineEndpoint } from '#shared/declaration';
import { pageReads, registrationOptions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/security/passkeys/options', 'page')],
  // The first step of adding a passkey: asked before the browser makes one, not after (it would stay on the device, unknown here).
  recentSignIn: true,
  needs: { table: [...pageReads, ...registrationOptions] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('POST /account/security/passkeys/options, signed in: a new passkey’s options (a challenge that expires unused)', {
      form: {}, cookies: [await kit.session()],
    }),
  },
});
