import { DEVICE_KEY_PREFIXES } from '#shared/data/item-keys';
import { filterPattern, type FilterPattern } from '#shared/webhooks/stream-filter';

/**
 * The filter of the desired state's event source mapping (infra/constructs/device-shadow.ts; the
 * local service applies it to its stream too): changes of device items only (MODIFY), the only
 * records that can carry an owner's command of `active` or `sound`, and their removals (REMOVE: a
 * device deleted with its account, whose certificate is deactivated). Lambda's filters cannot compare
 * the old and new images, so which of them changed a device-side field is the function's to tell
 * (shared/domain/shadow.ts desiredChangeOf).
 */
export const DESIRED_STATE_FILTER_PATTERNS: readonly FilterPattern[] = [filterPattern({ keyPrefixes: DEVICE_KEY_PREFIXES, eventNames: ['MODIFY', 'REMOVE'] })];

/** The mapping's retries of a failing batch (each after a split down to one record) before its on-failure queue. */
export const DESIRED_STATE_RETRY_ATTEMPTS = 10;
/** A command older than this is handed to the on-failure queue instead: the owner has likely moved on. */
export const DESIRED_STATE_MAX_RECORD_AGE_SECONDS = 6 * 3600;
