import { auth, defineEndpoint } from '#shared/declaration';
import { claimDevice, devices, pageReads } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/account/devices/claim', 'page')],
  needs: { table: [...pageReads, ...claimDevice, devices.listDevicesByOwner] },
  sample: {
    // A well-formed code that names nothing: counted, looked up, refused.
    status: 400,
    make: async (kit) => kit.page('POST /account/devices/claim, signed in, a claim code that names no device: the devices page again', {
      form: { claim_code: 'BCDF-GHJK-LMNP-QRST' }, cookies: [await kit.session()],
    }),
  },
});
