import { normalizeEmail } from '#shared/domain/user';

// Key builders: the only place that knows how items are laid out. Ownership is part of the
// device key, so "my device" is one GetItem/UpdateItem and another user's device does not exist.

export const userKey = (userId: string) => ({ pk: `USER#${userId}`, sk: 'PROFILE' });

export const DEVICE_SK_PREFIX = 'DEVICE#';
export const devicesOfUserKey = (userId: string) => ({ pk: `USER#${userId}`, skPrefix: DEVICE_SK_PREFIX });
export const deviceKey = (userId: string, deviceId: string) => ({
  pk: `USER#${userId}`,
  sk: `${DEVICE_SK_PREFIX}${deviceId}`,
});
/** GSI1 entry that finds a device by id alone (operators: provisioning, connectivity). */
export const deviceByIdIndexKey = (deviceId: string) => ({ gsi1pk: `DEVICE#${deviceId}`, gsi1sk: 'DEVICE' });

export const emailKey = (email: string) => ({ pk: `EMAIL#${normalizeEmail(email)}`, sk: 'EMAIL' });
