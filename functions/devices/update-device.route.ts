import { json, ref } from '#shared/api-docs/openapi';
import { defineEndpoint, resource } from '#shared/declaration';
import { devices } from '#functions/needs';

export default defineEndpoint({
  routes: resource('PUT', '/devices/{device_id}', 'write_device'),
  needs: { table: [devices.updateDeviceSeenBy] },
  openApi: {
    summary: 'Changes the members present (name, place, active, sound)',
    success: { 204: { description: 'Changed; no body' } },
    body: { required: true, ...json(ref('DeviceChanges')) },
  },
  sample: {
    status: 204,
    make: (kit) => kit.api('PUT /devices/{device_id} {"active": true}: away mode on for the demo user’s first device', { active: true }),
  },
});
