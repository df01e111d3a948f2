import { json, ref } from '#shared/api-docs/openapi';
import { defineEndpoint, resource } from '#shared/declaration';
import { devices } from '#functions/needs';

export default defineEndpoint({
  routes: resource('GET', '/devices', 'read_device'),
  needs: { table: [devices.listDevicesSeenBy] },
  openApi: { summary: 'The devices the user owns', success: { 200: { description: 'The devices', ...json({ type: 'array', items: ref('Device') }) } } },
  sample: { status: 200, make: (kit) => kit.api('GET /devices with a token of the confirmed demo user') },
});
