import { auth, defineEndpoint } from '#shared/declaration';
import { factors, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/security/recovery-codes', 'page')],
  needs: { table: [...pageReads, factors.takeRecoveryReveal] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /account/security/recovery-codes, signed in, no codes waiting: says they were shown', { cookies: [await kit.session()] }),
  },
});
