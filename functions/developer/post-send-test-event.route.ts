import { auth, defineEndpoint } from '#shared/declaration';
import { sendTestEvent, webhookFormReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/webhook/test', 'page')],
  needs: { table: [...webhookFormReads, ...sendTestEvent], webhookQueue: ['send'] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /developer/apps/{client_id}/webhook/test on a scratch application with a webhook: a webhook.test delivery queued', {
      pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: {}, cookies: [await kit.session()],
    }),
  },
});
