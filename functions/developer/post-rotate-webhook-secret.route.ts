import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads, revealWebhookSecret, webhooks } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/webhook/secret', 'page')],
  needs: { table: [...appPageReads, webhooks.rotateSecret, ...revealWebhookSecret] },
  sample: {
    status: 303,
    make: async (kit) => kit.page(
      'POST /developer/apps/{client_id}/webhook/secret, confirmed, on a scratch application with a webhook: to the page of its new signing secret',
      { pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: { confirm: 'yes' }, cookies: [await kit.session()] },
    ),
  },
});
