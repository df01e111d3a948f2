import { ownedDevicesPage } from '#shared/views/owned-device-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { normalizeDeviceId } from '#shared/domain/device';
import { devices, removeDevice } from '#shared/runtime';

/**
 * POST /account/devices/{device_id}/remove — removes the device from the user's account and frees
 * it (removeDevice: marked with the applications that see it, its certificate deactivated, then one
 * transaction that moves it out and drops it from every consent), then 303 to the devices page. A
 * device the user does not own (another's, none, a malformed id) is the devices page with a 404, nothing written.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/devices' }, async ({ event, signedIn, viewer }) => {
  const userId = signedIn.user.id;
  const deviceId = normalizeDeviceId(event.pathParameters?.device_id ?? '');
  if (deviceId && await removeDevice(userId, deviceId)) return redirect('/account/devices?done=removed', 303);
  return ownedDevicesPage(viewer, { devices: await devices.listDevicesByOwner(userId), status: 404, notFound: true });
});
