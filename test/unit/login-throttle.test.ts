import { describe, expect, it } from 'vitest';
import {
  delayAfterFailures, FREE_ATTEMPTS, KNOWN_BROWSER_FAILURE_LIMIT, KNOWN_BROWSER_TTL_SECONDS, MAX_DELAY_MS, nextAttemptAfterReserving,
  retryAfterMs, retryAfterSeconds, waitOf,
} from '#shared/accounts/login-throttle';
import type { ThrottleRecord, ThrottleScope } from '#shared/data/throttle-repo';

// Time is a parameter of the rules: every case names its `now`, nothing waits.
const T = Date.UTC(2026, 4, 6, 7, 8, 9, 10);
const SECOND = 1000;

const record = (scope: ThrottleScope, failures: number, nextAttemptAt = T): ThrottleRecord =>
  ({ scope, subject: 'x', failures, nextAttemptAt, stored: failures === 0 ? 'none' : 'live' });
const pair = (failures: number, nextAttemptAt = T) => record('account-address', failures, nextAttemptAt);

/** The records after `n` failures made one after another, each as soon as the previous wait allowed. */
function afterFailures(scope: ThrottleScope, n: number): { record: ThrottleRecord; at: number } {
  let r = record(scope, 0, 0);
  let at = T;
  for (let i = 0; i < n; i++) {
    at = Math.max(at, waitOf(r, at) + at);
    r = { ...r, failures: r.failures + 1, nextAttemptAt: nextAttemptAfterReserving(r, at), stored: 'live' };
  }
  return { record: r, at };
}

describe('login throttle rules', () => {
  it('lets 3 failures of an account from one address, 10 of an account and 10 of an address go free, then waits 1 s, doubling up to 15 minutes', () => {
    const schedule = Array.from({ length: 16 }, (_, failures) => delayAfterFailures(failures) / SECOND);

    expect(FREE_ATTEMPTS).toEqual({ 'account-address': 3, account: 10, address: 10, 'second-factor': 5 });
    expect(MAX_DELAY_MS).toBe(15 * 60 * SECOND);
    expect(schedule).toEqual([0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    expect([9, 10, 11, 12].map((failures) => delayAfterFailures(failures, 10) / SECOND)).toEqual([0, 1, 2, 4]);
    expect(delayAfterFailures(10_000)).toBe(MAX_DELAY_MS);
  });

  it('trusts a known browser for 5 failures, and its cookie for 30 days', () => {
    expect(KNOWN_BROWSER_FAILURE_LIMIT).toBe(5);
    expect(KNOWN_BROWSER_TTL_SECONDS).toBe(30 * 86_400);
  });

  it.each([
    ['account-address', 3, [0, 0, 0, 1]],
    ['account-address', 6, [0, 0, 0, 1, 2, 4, 8]],
    ['account', 12, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4]],
    ['address', 10, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]],
  ] as const)('%s: after each of %i reservations, the wait before the next is %j seconds', (scope, n, waits) => {
    const seen = [];
    for (let i = 0; i <= n; i++) {
      const { record: r, at } = afterFailures(scope, i);
      seen.push(waitOf(r, at) / SECOND);
    }
    expect(seen).toEqual(waits);
  });

  it('sets the first delay for a reservation below the free attempts, so concurrent ones that reach them still wait a second', () => {
    // Read with 0 failures, but two more reservations landed before this one: it makes the third.
    expect(nextAttemptAfterReserving(pair(0), T)).toBe(T + SECOND);
    expect(nextAttemptAfterReserving(pair(2), T)).toBe(T + SECOND);
    expect(nextAttemptAfterReserving(pair(3), T)).toBe(T + 2 * SECOND);
    expect(nextAttemptAfterReserving(record('account', 0), T)).toBe(T + SECOND);
    expect(nextAttemptAfterReserving(record('account', 12), T)).toBe(T + 8 * SECOND);
  });

  it.each([
    [3, 1000, 1], [3, 1, 1], [3, 0, 0], [3, -1, 0], [3, -60_000, 0],
    [4, 2000, 2], [4, 1000, 1], [4, 999, 1], [4, 0, 0],
    [13, 900_000, 900], [13, 1, 1], [13, 0, 0],
  ])('with %i failures and the next attempt due %i ms from now: Retry-After %i', (failures, due, seconds) => {
    expect(retryAfterSeconds([pair(failures, T + due)], T)).toBe(seconds);
    expect(retryAfterMs([pair(failures, T + due)], T)).toBe(Math.max(0, due));
  });

  it('asks for no wait below the free attempts, whatever the next attempt says, nor without records', () => {
    expect(retryAfterSeconds([pair(2, T + 60_000), record('account', 9, T + 60_000), record('address', 9, T + 60_000)], T)).toBe(0);
    expect(retryAfterSeconds([], T)).toBe(0);
  });

  it('applies the strictest of the records', () => {
    const records = [pair(6, T + 8 * SECOND), record('account', 12, T + 28 * SECOND), record('address', 3, T + 100 * SECOND)];

    expect(retryAfterSeconds(records, T)).toBe(28);
    expect(retryAfterSeconds(records, T + 27_500)).toBe(1);
    expect(retryAfterSeconds(records, T + 28_000)).toBe(0);
  });
});
