import { auth, defineEndpoint } from '#shared/declaration';
import { devices, issueCode, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/oauth/authorize', 'page')],
  needs: { table: [...pageReads, ...issueCode, devices.listDevicesByOwner] },
  sample: {
    status: 303,
    make: async (kit) => kit.page('POST /oauth/authorize, signed in, decision deny: back to the application with access_denied', {
      form: { ...kit.authorizeParams(), decision: 'deny' }, cookies: [await kit.session()],
    }),
  },
});
