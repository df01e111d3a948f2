import { json, ref } from '#shared/api-docs/openapi';
import { defineEndpoint, resource } from '#shared/declaration';
import { devices } from '#functions/needs';

export default defineEndpoint({
  routes: resource('GET', '/devices/{device_id}', 'read_device'),
  needs: { table: [devices.getDeviceSeenBy] },
  openApi: {
    summary: 'One device the user owns, as a one-element array',
    success: { 200: { description: 'An array holding the device', ...json({ type: 'array', items: ref('Device'), minItems: 1, maxItems: 1 }) } },
  },
  sample: { status: 200, make: (kit) => kit.api('GET /devices/{device_id}: the demo user’s first device') },
});
