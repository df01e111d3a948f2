import { auth, defineEndpoint } from '#shared/declaration';
import { authorizeDevice } from '#functions/needs';

export default defineEndpoint({
  // Not the token class, which is the routes that sign (half the KMS quota): nothing is signed here.
  routes: [auth('POST', '/oauth/device_authorization', 'page')],
  needs: { table: authorizeDevice },
  sample: {
    // The demo application does not use the device flow (a sample must leave the demo data as it was).
    status: 400,
    make: (kit) => kit.page('POST /oauth/device_authorization as the demo application, which does not use the device flow: unauthorized_client', {
      form: { scope: 'read_device' }, headers: { authorization: kit.demoClientBasic() },
    }),
  },
});
