import { parseDeviceKey } from '#shared/data/item-keys';
import type { DeviceCertificates } from '#shared/devices/claiming';
import { desiredChangeOf, isSupersededBy } from '#shared/domain/shadow';
import type { Logger } from '#shared/log';
import type { DeviceShadows } from '#shared/shadow/device-shadows';
import { toChangeRecord, type StreamRecordLike } from '#shared/webhooks/fan-out';

/** How many times a desired update is tried again when the shadow moved on between its read and its write (409). */
const CONFLICT_RETRIES = 4;

export interface SyncDesiredDeps {
  shadows: DeviceShadows;
  /** IoT Core's certificates, loaded on the first deactivation. */
  certificates: () => DeviceCertificates;
  logger: Logger;
}

/** What became of a batch: desired states written, those already superseded in the shadow (not written again), certificates deactivated. */
export interface SyncOutcome { written: number; superseded: number; deactivated: number }

/**
 * Brings the owners' commands to their devices: for each stream record, in order, whose change of a
 * device item set `active` or `sound` (desiredChangeOf: not a device's own report), the shadow's
 * desired state gets the changed members and the command's number (`command`, the item's `seq`).
 * Ordered and idempotent: the shadow is read first (GetThingShadow) and a desired state with the same
 * or a later command is left alone (a repeated or stale record); the write names the version read,
 * so a write racing another is refused (409) and the record read again. Any other failure throws:
 * the batch is handed over again (Lambda's stream retries, then its on-failure queue), and the
 * records already written are then superseded, not written twice.
 *
 * A device item deleted while an account still owned it (the account's deletion: REMOVE) loses its
 * IoT identity too: its certificate (`certificateId`) is deactivated, so the device can no longer
 * connect. A removal by its owner (`releasing`) has deactivated it already and is left alone.
 * Deactivating twice is harmless, so a batch handed over again is safe.
 */
export async function syncDesiredState(records: readonly StreamRecordLike[], deps: SyncDesiredDeps): Promise<SyncOutcome> {
  const outcome: SyncOutcome = { written: 0, superseded: 0, deactivated: 0 };
  for (const record of records) {
    const change = toChangeRecord(record);
    const gone = change?.eventName === 'REMOVE' ? change.oldImage : undefined;
    if (gone && typeof gone.certificateId === 'string' && gone.releasing === undefined && parseDeviceKey({ pk: String(gone.pk ?? ''), sk: String(gone.sk ?? '') })) {
      await deps.certificates().deactivate(gone.certificateId);
      outcome.deactivated += 1;
      deps.logger.info('certificate deactivated', { deviceId: String(gone.id ?? '') });
      continue;
    }
    if (!change?.newImage) continue;
    const key = parseDeviceKey({ pk: String(change.newImage.pk ?? ''), sk: String(change.newImage.sk ?? '') });
    const desired = key && desiredChangeOf(change.eventName, change.newImage);
    if (!key || !desired) continue;
    for (let attempt = 0; ; attempt++) {
      const shadow = await deps.shadows.read(key.deviceId);
      if (isSupersededBy(shadow?.desired, desired.command)) {
        outcome.superseded += 1;
        deps.logger.info('desired state already superseded', { deviceId: key.deviceId, command: desired.command });
        break;
      }
      if (await deps.shadows.writeDesired(key.deviceId, desired, shadow?.version) === 'updated') {
        outcome.written += 1;
        deps.logger.info('desired state written', { deviceId: key.deviceId, command: desired.command, fields: Object.keys(desired).filter((f) => f !== 'command') });
        break;
      }
      if (attempt >= CONFLICT_RETRIES) throw new Error(`The shadow of ${key.deviceId} kept changing: ${CONFLICT_RETRIES + 1} version conflicts`);
    }
  }
  return outcome;
}
