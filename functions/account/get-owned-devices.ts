import { ownedDevicesPage, type DevicesOutcome } from '#shared/views/owned-device-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { devices } from '#shared/runtime';

const OUTCOMES: readonly DevicesOutcome[] = ['added', 'removed'];

/**
 * GET /account/devices — the devices the user owns, each with its Remove form, and the form that
 * adds one with its claim code. One BatchGetItem (session, user), one Query (the user's devices).
 * `?done=`: says what a form did.
 */
export const handler = pageHandler({ session: 'required', loginReturn: '/account/devices' }, async ({ event, signedIn, viewer }) => {
  const done = OUTCOMES.find((outcome) => outcome === event.queryStringParameters?.done);
  return ownedDevicesPage(viewer, { devices: await devices.listDevicesByOwner(signedIn.user.id), done });
});
