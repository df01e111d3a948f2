import { normalizeDeviceId, parseDeviceChanges } from '#shared/domain/device';
import { NotFoundError } from '#shared/errors';
import { apiHandler } from '#shared/http/http';
import { noContent } from '#shared/http/responses';
import { devices } from '#shared/runtime';

/** PUT /devices/{device_id} — changes the members present, 204 (docs/api.md#put-devicesdevice_id). */
export const handler = apiHandler<unknown>(async ({ claims, path, body }) => {
  const deviceId = normalizeDeviceId(path.device_id ?? '');
  if (!deviceId) throw new NotFoundError('No such device.');
  await devices.updateDeviceSeenBy(claims.sub, deviceId, claims.clientId, parseDeviceChanges(body));
  return noContent();
}, { body: 'json' });
