import { defineEndpoint } from '#shared/declaration';
import { IOT_CERTIFICATES_ENTRY } from '#shared/devices/claiming';

export default defineEndpoint({
  eventSource: 'table-stream',
  // shared/shadow/sync-desired.ts: per owner's command, the shadow read, then its desired state written (again on a 409). No table access: the stream is the mapping's.
  // And a device deleted with its account: its certificate deactivated by the IoT client, loaded only then.
  lazyModules: [IOT_CERTIFICATES_ENTRY],
  needs: { deviceShadow: ['read', 'write'], deviceCertificates: 'deactivate' },
  sample: {
    status: 200,
    // A rename is not a device-side change: no shadow is read or written.
    make: (kit) => ({
      event: kit.deviceRenameRecord(),
      description: 'a stream record of a rename of the demo user’s first device: not a device-side field, so no desired state',
    }),
  },
});
