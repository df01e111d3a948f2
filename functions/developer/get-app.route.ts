import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/developer/apps/{client_id}', 'page')],
  needs: { table: appPageReads },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /developer/apps/{client_id}: the demo application, signed in as its developer', {
      pathParameters: { client_id: kit.demoClient.clientId }, cookies: [await kit.session()],
    }),
  },
});
