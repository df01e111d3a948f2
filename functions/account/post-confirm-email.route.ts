import { auth, defineEndpoint } from '#shared/declaration';
import { links, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/confirm-email', 'page')],
  needs: { table: [...pageReads, links.peekLink, links.redeemLink] },
  sample: {
    status: 303,
    // The confirmed demo user's link: confirming again changes nothing in the demo data.
    make: async (kit) => kit.page('POST /confirm-email with a live link of the confirmed demo user', {
      form: { token: await kit.link('confirm-email', kit.confirmed) },
    }),
  },
});
