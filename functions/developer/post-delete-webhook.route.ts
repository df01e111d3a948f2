import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads, webhooks } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/webhook/delete', 'page')],
  needs: { table: [...appPageReads, webhooks.removeSubscription] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps/{client_id}/webhook/delete, confirmed, on a scratch application with a webhook', {
      pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: { confirm: 'yes' }, cookies: [await kit.session()],
    }),
  },
});
