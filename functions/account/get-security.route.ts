import { auth, defineEndpoint } from '#shared/declaration';
import { factors, pageReads, passkeys, sessions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/security', 'page')],
  needs: { table: [...pageReads, factors.factorsRead, passkeys.passkeysOf, sessions.sessionsOf] },
  sample: { status: 200, make: async (kit) => kit.page('GET /account/security, signed in: the sign-in settings', { cookies: [await kit.session()] }) },
});
