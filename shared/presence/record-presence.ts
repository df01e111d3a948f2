import type { PresenceOutcome } from '#shared/data/presence-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { parseLifecycleEvent, type LifecycleEventProblem } from '#shared/domain/presence';
import type { Logger } from '#shared/log';

/** What became of one lifecycle event: its effect on the device, or why it was dropped before any write. */
export type PresenceResult = PresenceOutcome | 'unknown-device' | LifecycleEventProblem;

/** The repository operations recordPresence uses (its function's grants: functions/needs.ts). */
export const PRESENCE_USES = { devices: ['findDeviceOwner'], presence: ['applyPresence'] } as const satisfies UsesDeclaration;

export type PresenceDeps = Uses<typeof PRESENCE_USES> & { logger: Logger };

/**
 * Records one lifecycle event of AWS IoT Core as the device's presence: the device's owner by its id
 * (one Query of GSI1: the event names the device only), then one conditional write
 * (PresenceRepo.applyPresence; a second only for a connect that arrives after its own disconnect).
 * Everything but `applied` and `late-connect` is a normal outcome, not an error: it is
 * logged on one line (event type, device id when the client id is one, the reason) and writes
 * nothing: a malformed or oversized event, a client id that names no device, a device that is gone,
 * a repeated or late event. Only a storage failure throws (the invocation is then retried).
 */
export async function recordPresence(input: unknown, deps: PresenceDeps): Promise<PresenceResult> {
  const parsed = parseLifecycleEvent(input);
  if ('problem' in parsed) {
    deps.logger.warn('lifecycle event dropped', { reason: parsed.problem });
    return parsed.problem;
  }
  const { event } = parsed;
  const facts = { eventType: event.eventType, deviceId: event.deviceId, versionNumber: event.versionNumber, disconnectReason: event.disconnectReason };
  const owner = await deps.devices.findDeviceOwner(event.deviceId);
  if (!owner) {
    deps.logger.warn('lifecycle event dropped', { ...facts, reason: 'unknown-device' });
    return 'unknown-device';
  }
  const outcome = await deps.presence.applyPresence(owner, event);
  if (outcome === 'applied' || outcome === 'late-connect') deps.logger.info('presence recorded', { ...facts, outcome });
  else deps.logger.info('lifecycle event dropped', { ...facts, reason: outcome });
  return outcome;
}
