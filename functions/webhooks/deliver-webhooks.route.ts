import { defineEndpoint } from '#shared/declaration';
import { deliverMessage, disabledNotice } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'webhook-queue',
  // The e-mail to the developer of a disabled webhook carries the SES client: loaded only on that rare path.
  lazyModules: ['shared/webhooks/disabled-notice.ts'],
  // shared/webhooks/deliver.ts (delivery, subscription and consent in one read), and the e-mail to the developer of a disabled one.
  needs: {
    table: [...deliverMessage, ...disabledNotice],
    sendsMail: true,
    webhookQueue: ['retry'],
  },
  sample: {
    status: 200,
    make: (kit) => ({
      event: kit.queueMessage({ clientId: kit.demoClient.clientId, webhookId: 'msg_000000000_00000000000000000000' }),
      description: 'a delivery-queue message naming a delivery that does not exist: read, nothing sent, no failure reported',
    }),
  },
});
