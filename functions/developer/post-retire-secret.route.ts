import { auth, defineEndpoint } from '#shared/declaration';
import { clients, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/secret/retire', 'page')],
  needs: { table: [...pageReads, clients.retirePreviousSecret] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps/{client_id}/secret/retire on a scratch application', {
      pathParameters: { client_id: await kit.scratchApp() }, form: {}, cookies: [await kit.session()],
    }),
  },
});
