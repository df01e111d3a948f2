import { defineEndpoint } from '#shared/declaration';
import { fanOut } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'table-stream',
  // shared/webhooks/fan-out.ts: the owner's consents, their subscriptions, one delivery per event and application (written while the consent or webhook stands).
  needs: { table: fanOut, webhookQueue: ['send'] },
  sample: {
    status: 200,
    // A stream record of a rename that did not happen: the demo user has authorized no application, so nothing is queued.
    make: (kit) => ({
      event: kit.deviceRenameRecord(),
      description: 'a stream record of a rename of the demo user’s first device: the applications to tell (none authorized: nothing queued)',
    }),
  },
});
