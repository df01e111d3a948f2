import { defineEndpoint } from '#shared/declaration';
import { recordReport } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'iot-shadow',
  // shared/shadow/record-report.ts: the device's owner by its id, then one conditional write ordered by the shadow's version.
  needs: { table: recordReport },
  sample: {
    status: 200,
    // A thing that names no device: dropped after the owner's look-up, nothing written.
    make: () => ({
      event: {
        thingName: '00000000-0000-4000-8000-000000000000', timestamp: Math.floor(Date.now() / 1000),
        current: { state: { reported: { sound: false, version: '1.0.0' } }, metadata: {}, version: 1 },
      },
      description: 'a shadow documents message of a thing that names no device: dropped (unknown-device), nothing written',
    }),
  },
});
