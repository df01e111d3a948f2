import { defineEndpoint } from '#shared/declaration';
import { recordPresence } from '#functions/needs';

export default defineEndpoint({
  eventSource: 'iot-presence',
  // shared/presence/record-presence.ts: the device's owner by its id, then one conditional write (two for a connect after its disconnect).
  needs: { table: recordPresence },
  sample: {
    status: 200,
    // A client id that names no device: dropped after the owner's look-up, nothing written.
    make: () => ({
      event: {
        clientId: '00000000-0000-4000-8000-000000000000', timestamp: Date.now(), eventType: 'connected', sessionIdentifier: '00000000-0000-0000-0000-000000000000',
        principalIdentifier: '0000000000000000000000000000000000000000000000000000000000000000', ipAddress: '192.0.2.1', versionNumber: 1,
      },
      description: 'a connect lifecycle event of a client id that names no device: dropped (unknown-device), nothing written',
    }),
  },
});
