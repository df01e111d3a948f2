import { auth, defineEndpoint } from '#shared/declaration';
import { devices, pageReads, removeDevice } from '#functions/needs';
import { IOT_CERTIFICATES_ENTRY } from '#shared/devices/claiming';

export default defineEndpoint({
  routes: [auth('POST', '/account/devices/{device_id}/remove', 'page')],
  // A removed device's certificate is deactivated by the IoT client, loaded only then.
  lazyModules: [IOT_CERTIFICATES_ENTRY],
  needs: { table: [...pageReads, ...removeDevice, devices.listDevicesByOwner], deviceCertificates: 'deactivate' },
  sample: {
    // A device the demo user does not own: looked for, nothing written.
    status: 404,
    make: async (kit) => kit.page('POST /account/devices/{device_id}/remove, signed in, a device the user does not own: the devices page, 404', {
      pathParameters: { device_id: '00000000-0000-4000-8000-000000000000' }, form: {}, cookies: [await kit.session()],
    }),
  },
});
