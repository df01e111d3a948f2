import { normalizeDeviceId } from '#shared/domain/device';

/**
 * A connect or disconnect lifecycle event of AWS IoT Core (`$aws/events/presence/connected/<clientId>`
 * and `…/disconnected/<clientId>`, "Lifecycle events" in the AWS IoT Core Developer Guide), reduced
 * to what presence uses. A device connects with its thing name as client id, and its thing name is
 * its device id.
 */
export interface LifecycleEvent {
  eventType: 'connected' | 'disconnected';
  /** The device id the client id names (lower-case). */
  deviceId: string;
  /** When IoT Core saw the event, in epoch milliseconds (AWS: "an approximation of when the event occurred"). */
  timestamp: number;
  /**
   * The connection's number: it grows with each new connection of the client id, and a disconnect
   * carries the number of the connection it ends.
   */
  versionNumber: number;
  /** Why the client went (disconnect events only), e.g. `MQTT_KEEP_ALIVE_TIMEOUT`. */
  disconnectReason?: string;
}

/**
 * The largest lifecycle event accepted, as JSON text: AWS's are a few hundred bytes (ids, an
 * address, a reason); anything far larger is not one of them and is dropped unread.
 */
export const LIFECYCLE_EVENT_MAX_BYTES = 4096;

/** Why a lifecycle event was dropped before any storage was asked. */
export type LifecycleEventProblem = 'too-large' | 'not-an-object' | 'unknown-event-type' | 'client-id-not-a-device' | 'bad-timestamp' | 'bad-version-number';

/**
 * Reads a lifecycle event as the IoT rule hands it over (the message, `SELECT *`). Returns the event,
 * or the first problem that makes it unusable: over LIFECYCLE_EVENT_MAX_BYTES, not a JSON object, an
 * event type other than connected/disconnected, a client id that is not a device id (so names no
 * device), or a timestamp or version number that is not a whole number of the right range.
 */
export function parseLifecycleEvent(input: unknown): { event: LifecycleEvent } | { problem: LifecycleEventProblem } {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(input) ?? '');
  } catch {
    return { problem: 'not-an-object' };
  }
  if (size > LIFECYCLE_EVENT_MAX_BYTES) return { problem: 'too-large' };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { problem: 'not-an-object' };
  const raw = input as Record<string, unknown>;
  if (raw.eventType !== 'connected' && raw.eventType !== 'disconnected') return { problem: 'unknown-event-type' };
  const deviceId = typeof raw.clientId === 'string' ? normalizeDeviceId(raw.clientId) : undefined;
  if (!deviceId) return { problem: 'client-id-not-a-device' };
  if (!isWholeNumber(raw.timestamp) || raw.timestamp <= 0) return { problem: 'bad-timestamp' };
  if (!isWholeNumber(raw.versionNumber) || raw.versionNumber < 0) return { problem: 'bad-version-number' };
  return {
    event: {
      eventType: raw.eventType,
      deviceId,
      timestamp: raw.timestamp,
      versionNumber: raw.versionNumber,
      ...(raw.eventType === 'disconnected' && typeof raw.disconnectReason === 'string' ? { disconnectReason: raw.disconnectReason.slice(0, 64) } : {}),
    },
  };
}

const isWholeNumber = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/** The topics IoT Core publishes connect and disconnect events on (`…/connected/<clientId>`, `…/disconnected/<clientId>`), as a topic filter. */
export const PRESENCE_TOPIC_FILTER = '$aws/events/presence/+/+';

/** The root of a device's own MQTT topics: `devices/<thing name>/…`, the only ones its IoT policy lets it use. */
export const DEVICE_TOPIC_ROOT = 'devices';
