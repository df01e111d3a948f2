import { auth, defineEndpoint } from '#shared/declaration';
import { deviceApproval, devices, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/device', 'page')],
  needs: { table: [...pageReads, ...deviceApproval, devices.listDevicesByOwner] },
  sample: {
    // A well-formed code that names nothing: counted, looked up, refused.
    status: 400,
    make: async (kit) => kit.page('POST /device, signed in, a code that names no request: the code form again', {
      form: { user_code: 'BCDF-GHJK' }, cookies: [await kit.session()],
    }),
  },
});
