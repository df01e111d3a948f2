import {
  CONSENT_KEY_PREFIXES, DEVICE_KEY_PREFIXES, FAMILY_KEY_PREFIXES, isFamilyKey, parseConsentKey, parseDeviceKey,
} from '#shared/data/item-keys';
import { DEVICE_FIELDS, type Device } from '#shared/domain/device';
import { isRevocationReason, type RevocationReason } from '#shared/domain/grant';
import type { WebhookEventType } from '#shared/domain/webhook';

// The event types and the webhook id are the domain's (shared/domain/webhook.ts).

/** Device events need the application to hold this scope from the device's owner. */
export const DEVICE_EVENT_SCOPE = 'read_device';

export interface DeviceEventData {
  /** The device's owner: the `sub` of the application's tokens. */
  user_id: string;
  device_id: string;
  /**
   * Grows by one with every write of the device: a receiver keeps the highest it has seen per
   * device and drops an event with a sequence at or below it (stale or duplicate).
   */
  sequence: number;
}

export interface DeviceUpdatedData extends DeviceEventData {
  /** The fields that changed, with their new values (public device fields only). */
  changes: Partial<Device>;
}
export interface DeviceConnectionChangedData extends DeviceEventData {
  connected: boolean;
  last_connection: string;
}
export interface DeviceAddedData extends DeviceEventData {
  device: Device;
}
export type DeviceRemovedData = DeviceEventData;
export interface GrantRevokedData {
  user_id: string;
  client_id: string;
  /** Why the application lost (part of) its grant. */
  reason: RevocationReason;
}
/** What the user changed of a grant; the devices themselves are never listed (hidden ones stay unknown). */
export interface GrantUpdatedData {
  user_id: string;
  client_id: string;
  scopes: string[];
  changed: ('scopes' | 'devices')[];
}

export interface WebhookTestData {
  client_id: string;
  message: string;
}

export interface EventDataByType {
  'device.updated': DeviceUpdatedData;
  'device.connection_changed': DeviceConnectionChangedData;
  'device.added': DeviceAddedData;
  'device.removed': DeviceRemovedData;
  'grant.revoked': GrantRevokedData;
  'grant.updated': GrantUpdatedData;
  'webhook.test': WebhookTestData;
}

/** The JSON body of a webhook (Standard Webhooks' recommended `type`/`timestamp`/`data` envelope). */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  type: T;
  /** ISO 8601 time of the change. */
  timestamp: string;
  data: EventDataByType[T];
}

/** Builds an event of the given type. */
export function webhookEvent<T extends WebhookEventType>(type: T, data: EventDataByType[T], at: Date): WebhookEvent<T> {
  return { type, timestamp: at.toISOString(), data };
}

/** The event that "send test event" delivers. */
export function testEvent(clientId: string, at: Date): WebhookEvent<'webhook.test'> {
  return webhookEvent('webhook.test', { client_id: clientId, message: 'This is a test event from the Device and User Service.' }, at);
}

/**
 * What one table change means for webhooks: the events, and whom they concern. Device events go
 * to every application holding a live grant from `ownerId` with `DEVICE_EVENT_SCOPE` whose device
 * choice shares `deviceId`; a grant event goes to `clientId` only.
 */
export type TableChange =
  | {
    kind: 'device'; ownerId: string; deviceId: string; events: WebhookEvent[]; sourceId: string;
    /**
     * A device freed by its owner: the applications that saw it when it was removed (the consents
     * no longer name it by the time the removal is read: shared/data/claim-repo.ts releaseDevice).
     */
    seenBy?: readonly string[];
  }
  | { kind: 'grant'; ownerId: string; clientId: string; events: WebhookEvent[]; sourceId: string };

/** The part of a DynamoDB stream record the events are made from, with images already unmarshalled. */
export interface ChangeRecord {
  /** The stream record's `eventID`: the same record read twice gives the same webhook ids. */
  eventId: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** Time of the change. */
  at: Date;
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
}

/**
 * The stream records that can make events, as data: key prefixes, event names and exact string
 * attributes of the old or new image, all of which a record must match (patterns are alternatives).
 * `changeToEvents` returns undefined for every record none of them matches; the fan-out's event source
 * mapping filters the stream with them (shared/webhooks/stream-filter.ts), so the writes that cannot
 * make events (sessions, throttle records, codes, mail counts, links, deliveries, token rotations)
 * invoke nothing, and the local stream reader applies the same filters.
 */
export interface EventRecordPattern {
  keyPrefixes: { pk: string; sk?: string };
  eventNames?: readonly ChangeRecord['eventName'][];
  oldImage?: Readonly<Record<string, string>>;
  newImage?: Readonly<Record<string, string>>;
}

export const EVENT_RECORD_PATTERNS: readonly EventRecordPattern[] = [
  // Devices: added, removed, updated or connection changed.
  { keyPrefixes: DEVICE_KEY_PREFIXES },
  // A consent removed: the user (or the application's deletion) ended the grant; or changed: the
  // user changed its scopes or devices (a change of neither makes no event: changeToEvents).
  { keyPrefixes: CONSENT_KEY_PREFIXES, eventNames: ['REMOVE', 'MODIFY'] },
  // A token family revoked (not its rotations, which rewrite it while it stays active).
  { keyPrefixes: FAMILY_KEY_PREFIXES, eventNames: ['MODIFY'], oldImage: { status: 'active' }, newImage: { status: 'revoked' } },
];

const UPDATE_FIELDS = DEVICE_FIELDS.filter((field) => field !== 'id' && field !== 'connected' && field !== 'last_connection');

/**
 * The webhook events of one table change, or undefined when it means none (most items are not
 * devices, consents or token families). Pure: the fan-out function and the local stream reader
 * both call it.
 */
export function changeToEvents(record: ChangeRecord): TableChange | undefined {
  const image = record.newImage ?? record.oldImage;
  if (!image) return undefined;
  const key = { pk: String(image.pk ?? ''), sk: String(image.sk ?? '') };
  const device = parseDeviceKey(key);
  if (device) return deviceChange(record, device.userId, device.deviceId);
  const consent = parseConsentKey(key);
  if (consent) {
    if (record.eventName === 'MODIFY') return grantUpdated(record, consent.userId, consent.clientId);
    if (record.eventName !== 'REMOVE') return undefined;
    const { userId, clientId } = consent;
    // An account deletion marks the consent with its reason just before removing it (Consent.endedReason).
    const ended = record.oldImage?.endedReason;
    const reason: RevocationReason = isRevocationReason(ended) ? ended : 'user_revoked';
    return {
      kind: 'grant', ownerId: userId, clientId, sourceId: record.eventId,
      events: [webhookEvent('grant.revoked', { user_id: userId, client_id: clientId, reason }, record.at)],
    };
  }
  if (isFamilyKey(key) && record.eventName === 'MODIFY') {
    const before = record.oldImage;
    const after = record.newImage;
    if (before?.status !== 'active' || after?.status !== 'revoked') return undefined;
    // A family revoked with its consent (the user revoked the application, or deleted the account) is told by the consent's removal.
    const reason = after.revokedReason as RevocationReason | undefined;
    if (reason === undefined || reason === 'user_revoked' || reason === 'account_deleted') return undefined;
    const userId = String(after.userId);
    const clientId = String(after.clientId);
    return {
      kind: 'grant', ownerId: userId, clientId, sourceId: record.eventId,
      events: [webhookEvent('grant.revoked', { user_id: userId, client_id: clientId, reason }, record.at)],
    };
  }
  return undefined;
}

function deviceChange(record: ChangeRecord, ownerId: string, deviceId: string): TableChange | undefined {
  const after = record.newImage;
  const before = record.oldImage;
  const base = (image: Record<string, unknown>): DeviceEventData => ({
    user_id: ownerId, device_id: deviceId, sequence: Number(image.seq ?? 0),
  });
  const events: WebhookEvent[] = [];
  if (record.eventName === 'INSERT' && after) {
    events.push(webhookEvent('device.added', { ...base(after), device: publicDevice(after) }, record.at));
  } else if (record.eventName === 'REMOVE' && before) {
    // The removal comes after every write of the device: one past its last sequence.
    events.push(webhookEvent('device.removed', { ...base(before), sequence: Number(before.seq ?? 0) + 1 }, record.at));
  } else if (record.eventName === 'MODIFY' && before && after) {
    const changes = Object.fromEntries(
      UPDATE_FIELDS.filter((field) => !sameValue(before[field], after[field])).map((field) => [field, after[field]]),
    ) as Partial<Device>;
    if (Object.keys(changes).length > 0) events.push(webhookEvent('device.updated', { ...base(after), changes }, record.at));
    if (!sameValue(before.connected, after.connected) || !sameValue(before.last_connection, after.last_connection)) {
      events.push(webhookEvent('device.connection_changed', {
        ...base(after), connected: Boolean(after.connected), last_connection: String(after.last_connection ?? ''),
      }, record.at));
    }
  }
  if (events.length === 0) return undefined;
  const seenBy = record.eventName === 'REMOVE' && Array.isArray(before?.seenBy) ? { seenBy: (before.seenBy as unknown[]).map(String) } : {};
  return { kind: 'device', ownerId, deviceId, events, sourceId: record.eventId, ...seenBy };
}

/** A consent rewritten with other scopes or another device choice: the application is told what changed (not the devices). */
function grantUpdated(record: ChangeRecord, userId: string, clientId: string): TableChange | undefined {
  const before = record.oldImage;
  const after = record.newImage;
  if (!before || !after) return undefined;
  // A freed device dropped from the consent's lists (Consent.deviceRelease): its `device.removed` tells it.
  if (after.deviceRelease !== undefined && after.deviceRelease !== before.deviceRelease) return undefined;
  const changed: GrantUpdatedData['changed'] = [];
  if (!sameValue(before.scopes, after.scopes)) changed.push('scopes');
  if (!sameValue(before.onlyDevices, after.onlyDevices) || !sameValue(before.exceptDevices, after.exceptDevices)) changed.push('devices');
  if (changed.length === 0) return undefined;
  return {
    kind: 'grant', ownerId: userId, clientId, sourceId: record.eventId,
    events: [webhookEvent('grant.updated', { user_id: userId, client_id: clientId, scopes: [...(after.scopes as string[] ?? [])], changed }, record.at)],
  };
}

function publicDevice(image: Record<string, unknown>): Device {
  return Object.fromEntries(DEVICE_FIELDS.map((field) => [field, image[field]])) as unknown as Device;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether an application holding `scopes` may receive events of this type. */
export function scopesCover(type: WebhookEventType, scopes: readonly string[]): boolean {
  return type.startsWith('device.') ? scopes.includes(DEVICE_EVENT_SCOPE) : true;
}
