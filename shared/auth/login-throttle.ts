import type { FailureRecord } from '#shared/data/throttle-repo';

/** Failures allowed before delays start. */
export const FREE_ATTEMPTS = 3;
const MAX_DELAY_MS = 15 * 60 * 1000;

/**
 * Milliseconds to wait before the next attempt: 0 for the first few failures, then doubling from
 * one second up to 15 minutes. The strictest of the account's and the address's records wins.
 */
export function retryAfterMs(records: FailureRecord[], now: number): number {
  let wait = 0;
  for (const { failures, lastFailureAt } of records) {
    if (failures < FREE_ATTEMPTS) continue;
    const delay = Math.min(1000 * 2 ** (failures - FREE_ATTEMPTS), MAX_DELAY_MS);
    wait = Math.max(wait, lastFailureAt + delay - now);
  }
  return Math.max(0, wait);
}
