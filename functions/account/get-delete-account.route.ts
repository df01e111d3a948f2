import { auth, defineEndpoint } from '#shared/declaration';
import { applicationsInUse, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/delete', 'page')],
  needs: { table: [...pageReads, ...applicationsInUse] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /account/delete, signed in: what the deletion removes, and the password it asks for', { cookies: [await kit.session()] }),
  },
});
