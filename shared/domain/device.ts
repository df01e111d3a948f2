import { ValidationError } from '#shared/domain/errors';

/** A device as docs/api.md#device shows it. */
export interface Device {
  id: string;
  name: string;
  place: string;
  version: string;
  last_connection: string;
  active: boolean;
  connected: boolean;
  reference: string;
  latitude: number;
  longitude: number;
  sound: boolean;
}

/** The members a client may change (docs/api.md#put-devicesdevice_id). */
export interface DeviceChanges {
  name?: string;
  place?: string;
  active?: boolean;
  sound?: boolean;
}

export const DEVICE_FIELDS = [
  'id', 'name', 'place', 'version', 'last_connection', 'active',
  'connected', 'reference', 'latitude', 'longitude', 'sound',
] as const satisfies readonly (keyof Device)[];

const TEXT_MEMBERS = ['name', 'place'] as const;
const BOOLEAN_MEMBERS = ['active', 'sound'] as const;
export const TEXT_MAX_LENGTH = 100;
// C0 and C1 control characters, DEL included.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
// An unpaired UTF-16 surrogate is not a character and has no UTF-8 form for storage.
const LONE_SURROGATE = /\p{Cs}/u;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` has the shape of a device id; anything else cannot name a device. */
export function isDeviceId(value: string): boolean {
  return UUID.test(value);
}

/** Device ids are UUIDs, stored lower-case; any letter case names the same device. */
export function normalizeDeviceId(value: string): string | undefined {
  return isDeviceId(value) ? value.toLowerCase() : undefined;
}

/** Projects a stored item onto the public Device shape, in the field order of docs/api.md#device. */
export function toDevice(item: Record<string, unknown>): Device {
  return Object.fromEntries(DEVICE_FIELDS.map((field) => [field, item[field]])) as unknown as Device;
}

/**
 * Validates a PUT body and returns the changes it asks for.
 * Throws ValidationError naming the first offending member; nothing is partially accepted.
 */
export function parseDeviceChanges(body: unknown): DeviceChanges {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError('The request body must be a JSON object.');
  }
  const changes: DeviceChanges = {};
  for (const [member, value] of Object.entries(body)) {
    if ((TEXT_MEMBERS as readonly string[]).includes(member)) {
      changes[member as (typeof TEXT_MEMBERS)[number]] = parseText(member, value);
    } else if ((BOOLEAN_MEMBERS as readonly string[]).includes(member)) {
      if (typeof value !== 'boolean') {
        throw new ValidationError(`Member '${member}' must be a boolean.`);
      }
      changes[member as (typeof BOOLEAN_MEMBERS)[number]] = value;
    } else if ((DEVICE_FIELDS as readonly string[]).includes(member)) {
      throw new ValidationError(`Member '${member}' is read-only.`);
    } else {
      throw new ValidationError(`Unknown member '${truncate(member)}'.`);
    }
  }
  return changes;
}

function parseText(member: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new ValidationError(`Member '${member}' must be a string.`);
  }
  const length = [...value].length;
  if (length < 1 || length > TEXT_MAX_LENGTH) {
    throw new ValidationError(`Member '${member}' must be 1 to ${TEXT_MAX_LENGTH} characters long.`);
  }
  if (CONTROL_CHARACTERS.test(value)) {
    throw new ValidationError(`Member '${member}' must not contain control characters.`);
  }
  if (LONE_SURROGATE.test(value)) {
    throw new ValidationError(`Member '${member}' must be well-formed Unicode text.`);
  }
  return value;
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
