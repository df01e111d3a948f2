import { normalizeDeviceId } from '#shared/domain/device';

// A device's state in its AWS IoT Core device shadow (the classic shadow of the thing named after the
// device id). The cloud writes `desired` (what the owner asked through `PUT /devices/{id}`); the
// device writes `reported` (what it is), and clears a desired member it overrides locally (its
// button). The desired state carries `command`: the device item's `seq` of the owner's write that
// asked for it (the item's `commandSeq`), which orders the cloud's updates (a stale or repeated one
// is not applied) and which the device reports back once applied, so that a report made before the
// owner's latest command cannot undo it.

/** The device fields that live on the device too: a PUT of one of them becomes its desired state. */
export const DEVICE_SIDE_FIELDS = ['active', 'sound'] as const;
export type DeviceSideField = (typeof DEVICE_SIDE_FIELDS)[number];

/** What the cloud sets in a shadow's desired state. */
export interface DesiredState {
  active?: boolean;
  sound?: boolean;
  /** The device item's `seq` of the write that asked for this state. */
  command: number;
}

/** The state a device reports that the device item takes: each member only when reported. */
export interface ReportedState {
  active?: boolean;
  sound?: boolean;
  /** The device's firmware version (dotted number text). */
  version?: string;
  /** Its location, when it reads one: both or neither. */
  latitude?: number;
  longitude?: number;
}


/** A device's report as the reports rule hands it over: its thing, the shadow's version, the state. */
export interface ShadowReport {
  deviceId: string;
  /** The shadow's version after the update: orders reports (a write keeps the highest applied). */
  shadowVersion: number;
  state: ReportedState;
  /** The owner's last command the device had applied (its reported `command`; 0 when it reports none). */
  command: number;
}

/** Why a report was dropped before any storage was asked. */
export type ShadowReportProblem =
  | 'too-large' | 'not-an-object' | 'thing-not-a-device' | 'bad-shadow-version' | 'no-reported-state' | 'unchanged' | `bad-${keyof ReportedState}` | 'bad-command';

/** The largest documents message read: two 8 KB states with their metadata fit well under it. */
export const SHADOW_DOCUMENTS_MAX_BYTES = 64 * 1024;
/** A firmware version as the device item shows it: dotted numbers, at most 32 characters. */
const FIRMWARE_VERSION = /^\d{1,9}(\.\d{1,9}){0,5}$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The desired state one change of a device item asks for, or undefined when it asks for none: only a
 * MODIFY made by the owner's command (the write set `commandSeq` to its own `seq`: a PUT of `active`
 * or `sound`; a device's report or a presence event never does, so a report never comes back to the
 * device as a command). The desired state is the item's device-side state as the command left it,
 * both members: what the table now says the device should be. Pure.
 */
export function desiredChangeOf(eventName: string | undefined, newImage: Record<string, unknown> | undefined): DesiredState | undefined {
  if (eventName !== 'MODIFY' || !newImage) return undefined;
  const command = newImage.commandSeq;
  if (typeof command !== 'number' || command !== newImage.seq) return undefined;
  const fields = DEVICE_SIDE_FIELDS.filter((field) => typeof newImage[field] === 'boolean');
  return { ...Object.fromEntries(fields.map((field) => [field, newImage[field]])), command };
}

/**
 * Reads a shadow's documents message (`$aws/things/<thing>/shadow/update/documents`, with the rule's
 * `topic(3) AS thingName`) as a device report. Returns the report, or the first problem: too large,
 * not an object, a thing that is not a device id, no whole shadow version, no reported state, a reported
 * state unchanged by this update (the cloud's own desired update), or a member of the wrong type or
 * range (`active`, `sound`: booleans; `version`: dotted numbers; `latitude` −90..90 and `longitude`
 * −180..180 together; `command`: a whole number). A member the device has been told otherwise and has not yet obeyed (the
 * shadow's desired value differs) is left out: the owner's newer command stands. Unknown members are
 * ignored. Pure.
 */
export function parseShadowReport(input: unknown): { report: ShadowReport } | { problem: ShadowReportProblem } {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(input) ?? '');
  } catch {
    return { problem: 'not-an-object' };
  }
  if (size > SHADOW_DOCUMENTS_MAX_BYTES) return { problem: 'too-large' };
  if (!isObject(input) || !isObject(input.current)) return { problem: 'not-an-object' };
  const deviceId = typeof input.thingName === 'string' ? normalizeDeviceId(input.thingName) : undefined;
  if (!deviceId) return { problem: 'thing-not-a-device' };
  const { current } = input;
  const version = current.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return { problem: 'bad-shadow-version' };
  const currentState = isObject(current.state) ? current.state : {};
  const reported = currentState.reported;
  if (!isObject(reported)) return { problem: 'no-reported-state' };
  const previous = isObject(input.previous) && isObject(input.previous.state) ? input.previous.state.reported : undefined;
  if (JSON.stringify(previous) === JSON.stringify(reported)) return { problem: 'unchanged' };

  const state: ReportedState = {};
  for (const field of ['active', 'sound'] as const) {
    if (!(field in reported)) continue;
    if (typeof reported[field] !== 'boolean') return { problem: `bad-${field}` };
    state[field] = reported[field];
  }
  if ('version' in reported) {
    if (typeof reported.version !== 'string' || !FIRMWARE_VERSION.test(reported.version) || reported.version.length > 32) return { problem: 'bad-version' };
    state.version = reported.version;
  }
  if ('latitude' in reported || 'longitude' in reported) {
    const { latitude, longitude } = reported;
    if (!isCoordinate(latitude, 90)) return { problem: 'bad-latitude' };
    if (!isCoordinate(longitude, 180)) return { problem: 'bad-longitude' };
    state.latitude = latitude;
    state.longitude = longitude;
  }
  const desired = isObject(currentState.desired) ? currentState.desired : {};
  for (const field of DEVICE_SIDE_FIELDS) {
    if (field in state && field in desired && desired[field] !== state[field]) delete state[field];
  }
  const command = 'command' in reported ? reported.command : 0;
  if (typeof command !== 'number' || !Number.isSafeInteger(command) || command < 0) return { problem: 'bad-command' };
  return { report: { deviceId, shadowVersion: version, state, command } };
}

const isCoordinate = (value: unknown, limit: number): value is number => typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;

/** Whether a desired state already in a shadow (its `command`) is as new as `command` or newer: the update is not sent again. */
export function isSupersededBy(stored: unknown, command: number): boolean {
  return isObject(stored) && typeof stored.command === 'number' && stored.command >= command;
}
