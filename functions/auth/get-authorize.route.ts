import { auth, defineEndpoint } from '#shared/declaration';
import { devices, issueCode, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/oauth/authorize', 'page')],
  needs: { table: [...pageReads, ...issueCode, devices.listDevicesByOwner] },
  sample: {
    // The consent page: the demo user has not authorized the demo application.
    status: 200,
    make: async (kit) => kit.page('GET /oauth/authorize for the demo application, signed in: the consent page', {
      query: kit.authorizeParams(), cookies: [await kit.session()],
    }),
  },
});
