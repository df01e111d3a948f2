import { auth, defineEndpoint } from '#shared/declaration';
import { redeliver, webhookFormReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/webhook/deliveries/{webhook_id}', 'page')],
  needs: { table: [...webhookFormReads, ...redeliver], webhookQueue: ['send'] },
  sample: {
    status: 303,
    make: async (kit) => {
      const clientId = await kit.scratchApp({ webhook: true });
      return kit.page('POST /developer/apps/{client_id}/webhook/deliveries/{webhook_id}: "send again" of a scratch application\'s test delivery', {
        pathParameters: { client_id: clientId, webhook_id: await kit.scratchDelivery(clientId) }, form: {}, cookies: [await kit.session()],
      });
    },
  },
});
