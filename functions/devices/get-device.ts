import { normalizeDeviceId } from '#shared/domain/device';
import { NotFoundError } from '#shared/errors';
import { apiHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { devices } from '#shared/runtime';

/** GET /devices/{device_id} — one owned device, as a one-element array (docs/api.md#get-devicesdevice_id). */
export const handler = apiHandler(async ({ claims, path }) => {
  const deviceId = normalizeDeviceId(path.device_id ?? '');
  const device = deviceId ? await devices.getDeviceSeenBy(claims.sub, deviceId, claims.clientId) : undefined;
  if (!device) throw new NotFoundError('No such device.');
  return ok([device]);
});
