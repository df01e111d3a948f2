import { auth, defineEndpoint } from '#shared/declaration';
import { endAppAccess, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/apps/{client_id}/revoke', 'page')],
  needs: { table: [...pageReads, ...endAppAccess] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /account/apps/{client_id}/revoke, signed in: the demo user’s grant to the demo application ends', {
      pathParameters: { client_id: kit.demoClient.clientId }, form: {}, cookies: [await kit.session()],
    }),
  },
});
