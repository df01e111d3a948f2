import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { links, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/confirm-email', 'page')],
  needs: { table: [...pageReads, links.peekLink] },
  sample: {
    status: 200,
    make: async (kit) => kit.page('GET /confirm-email with a live link: the confirm button', {
      query: { token: await kit.link('confirm-email', kit.confirmed) },
    }),
  },
  bench: { floor: [step.get('link')], minReason: 'GetItem of the link (the page only asks for a click)' },
});
