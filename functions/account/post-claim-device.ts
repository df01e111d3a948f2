import { ownedDevicesPage } from '#shared/views/owned-device-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { redirect } from '#shared/http/responses';
import { claimDevice, devices } from '#shared/runtime';

/**
 * POST /account/devices/claim — adds the device a claim code names to the user's devices
 * (claimDevice: the entry counted per account and address before the code is looked up, then one
 * transaction that uses the code up), then 303 to the devices page. A code that adds nothing is the
 * devices page again with what went wrong (400, or 429 past the entry limits), nothing written but
 * the entry's count.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/devices' }, async ({ event, form, signedIn, viewer }) => {
  const userId = signedIn.user.id;
  const claimed = await claimDevice(form.claim_code, userId, event.requestContext.http.sourceIp);
  if ('device' in claimed) return redirect('/account/devices?done=added', 303);
  return ownedDevicesPage(viewer, {
    devices: await devices.listDevicesByOwner(userId), error: claimed.problem, status: claimed.status, claimCode: form.claim_code?.slice(0, 64),
  });
});
