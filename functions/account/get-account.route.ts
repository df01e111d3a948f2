import { auth, defineEndpoint } from '#shared/declaration';
import { authorizedApps, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account', 'page')],
  needs: { table: [...pageReads, ...authorizedApps] },
  sample: { status: 200, make: async (kit) => kit.page('GET /account, signed in', { cookies: [await kit.session()] }) },
});
