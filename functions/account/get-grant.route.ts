import { auth, defineEndpoint } from '#shared/declaration';
import { devices, grants, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('GET', '/account/apps/{client_id}', 'page')],
  needs: { table: [...pageReads, devices.listDevicesByOwner, grants.lastUseOf] },
  sample: {
    // The demo user has not authorized the demo application on a fresh service: nothing to manage.
    status: 404,
    make: async (kit) => kit.page('GET /account/apps/{client_id}, signed in, an application the demo user has not authorized: 404', {
      pathParameters: { client_id: kit.demoClient.clientId }, cookies: [await kit.session()],
    }),
  },
});
