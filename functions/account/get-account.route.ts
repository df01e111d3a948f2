import { auth, defineEndpoint } from '#shared/declaration';
import { grants, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account', 'page')],
  needs: { table: [...pageReads, grants.listConsentsByUser] },
  sample: { status: 200, make: async (kit) => kit.page('GET /account, signed in', { cookies: [await kit.session()] }) },
});
