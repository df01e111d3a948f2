import { auth, defineEndpoint } from '#shared/declaration';
import { devices, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/devices', 'page')],
  needs: { table: [...pageReads, devices.listDevicesByOwner] },
  sample: { status: 200, make: async (kit) => kit.page('GET /account/devices, signed in: the demo user’s devices', { cookies: [await kit.session()] }) },
});
