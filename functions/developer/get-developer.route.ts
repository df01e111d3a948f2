import { auth, defineEndpoint } from '#shared/declaration';
import { clients, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/developer', 'page')],
  needs: { table: [...pageReads, clients.listClientsByDeveloper] },
  sample: { status: 200, make: async (kit) => kit.page('GET /developer, signed in: the demo user’s applications', { cookies: [await kit.session()] }) },
});
