import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads, clients } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}', 'page')],
  needs: { table: [...appPageReads, clients.updateClient] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps/{client_id}: the demo application saved with its current registration', {
      pathParameters: { client_id: kit.demoClient.clientId }, form: await kit.demoClientRegistration(), cookies: [await kit.session()],
    }),
  },
});
