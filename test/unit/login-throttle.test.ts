import { describe, expect, it } from 'vitest';
import { delayAfterFailures, FREE_ATTEMPTS, MAX_DELAY_MS, retryAfterMs, retryAfterSeconds } from '#shared/auth/login-throttle';
import type { FailureRecord } from '#shared/data/throttle-repo';

// Time is a parameter of the rules: every case names its `now`, nothing waits.
const T = Date.UTC(2026, 4, 6, 7, 8, 9, 10);
const SECOND = 1000;

const account = (failures: number, lastFailureAt = T): FailureRecord => ({ kind: 'account', failures, lastFailureAt });
const address = (failures: number, lastFailureAt = T): FailureRecord => ({ kind: 'address', failures, lastFailureAt });

describe('login throttle rules', () => {
  it('lets 3 failures go free, then waits 1 s, doubling with each failure up to 15 minutes', () => {
    const schedule = Array.from({ length: 16 }, (_, failures) => delayAfterFailures(failures) / SECOND);

    expect(FREE_ATTEMPTS).toBe(3);
    expect(MAX_DELAY_MS).toBe(15 * 60 * SECOND);
    expect(schedule).toEqual([0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    expect(delayAfterFailures(10_000)).toBe(MAX_DELAY_MS);
  });

  it.each([
    [3, 0, 1], [3, 1, 1], [3, 999, 1], [3, 1000, 0], [3, 60_000, 0],
    [4, 0, 2], [4, 1000, 1], [4, 1001, 1], [4, 2000, 0],
    [5, 0, 4], [5, 1, 4], [5, 3000, 1], [5, 3999, 1], [5, 4000, 0],
    [13, 0, 900], [13, 1, 900], [13, 899_000, 1], [13, 899_999, 1], [13, 900_000, 0],
    [50, 0, 900], [50, 900_000, 0],
  ])('after %i failures, %i ms after the last one: Retry-After %i', (failures, elapsed, seconds) => {
    expect(retryAfterSeconds([account(failures)], T + elapsed)).toBe(seconds);
    expect(retryAfterMs([account(failures)], T + elapsed)).toBe(Math.max(0, delayAfterFailures(failures) - elapsed));
  });

  it('asks for no wait below 3 failures, nor without records', () => {
    expect(retryAfterSeconds([account(2), address(2)], T)).toBe(0);
    expect(retryAfterSeconds([], T)).toBe(0);
  });

  it("applies the stricter of the account's and the address's waits", () => {
    // The address failed often long ago (128 s from T - 100 s), the account a little just now (8 s from T).
    const records = [account(6), address(10, T - 100 * SECOND)];

    expect(retryAfterSeconds(records, T)).toBe(28);
    expect(retryAfterSeconds(records, T + 27_500)).toBe(1);
    expect(retryAfterSeconds(records, T + 28_000)).toBe(0);
    expect(retryAfterSeconds([account(3), address(4, T - 10 * SECOND)], T)).toBe(1);
  });
});
