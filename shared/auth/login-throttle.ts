import type { FailureRecord } from '#shared/data/throttle-repo';

// The throttle's rules are pure functions of the failure records and of `now` (epoch milliseconds),
// which the caller reads from its clock: tests give them any time without waiting.

/** Failures allowed before delays start. */
export const FREE_ATTEMPTS = 3;
/** The longest wait between two attempts. */
export const MAX_DELAY_MS = 15 * 60 * 1000;

/**
 * The wait, in milliseconds, that `failures` failed attempts impose after the last of them: none
 * below FREE_ATTEMPTS, then one second, doubling with each further failure up to 15 minutes.
 */
export function delayAfterFailures(failures: number): number {
  if (failures < FREE_ATTEMPTS) return 0;
  return Math.min(1000 * 2 ** (failures - FREE_ATTEMPTS), MAX_DELAY_MS);
}

/**
 * Milliseconds to wait at `now` before the next attempt (0: it may go ahead). The strictest of the
 * account's and the address's records wins.
 */
export function retryAfterMs(records: FailureRecord[], now: number): number {
  let wait = 0;
  for (const { failures, lastFailureAt } of records) {
    wait = Math.max(wait, lastFailureAt + delayAfterFailures(failures) - now);
  }
  return wait;
}

/** The wait at `now` in whole seconds, rounded up, as `Retry-After` gives it (0: no wait). */
export function retryAfterSeconds(records: FailureRecord[], now: number): number {
  return Math.ceil(retryAfterMs(records, now) / 1000);
}
