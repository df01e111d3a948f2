import { auth, defineEndpoint } from '#shared/declaration';
import { appPageReads, revealWebhookSecret, webhooks } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/developer/apps/{client_id}/webhook', 'page')],
  needs: { table: [...appPageReads, webhooks.setUrl, ...revealWebhookSecret] },
  sample: {
    status: 303,
    // Webhook forms act on a scratch application with a webhook of its own (a public address never called: nothing is delivered).
    make: async (kit) => kit.page(
      'POST /developer/apps/{client_id}/webhook on a scratch application: registers its webhook, then to the page that shows the signing secret once',
      { pathParameters: { client_id: await kit.scratchApp({ webhook: false }) }, form: { webhook_url: kit.webhookUrl }, cookies: [await kit.session()] },
    ),
  },
});
