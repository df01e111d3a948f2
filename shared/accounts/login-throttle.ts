import type { ThrottleRecord, ThrottleScope } from '#shared/data/throttle-repo';

// The throttle's rules are pure functions of the throttle records and of `now` (epoch milliseconds),
// which the caller reads from its clock: tests give them any time without waiting.
//
// Every attempt first reserves one failure on each record that applies to it (a conditional write,
// see throttle-repo.ts), and only then is the password checked; a successful login gives its
// reservation back. So a count is never behind the checks made, however many requests run at once.

/**
 * Failures allowed before delays start, per scope: one guesser at one account from one address
 * gets few; the account across all addresses (a distributed attack on it) and the address across
 * all accounts (one address trying many accounts, or many people behind one NAT) get more, so that
 * neither an attacker elsewhere nor a neighbour can lock the owner out with a few wrong passwords.
 */
export const FREE_ATTEMPTS: Readonly<Record<ThrottleScope, number>> = {
  'account-address': 3,
  account: 10,
  address: 10,
  // Codes from an authenticator app (one in a million, three valid at a time) or recovery codes,
  // after a right password: five tries, then the same waits, about a hundred a day at most.
  'second-factor': 5,
};
/** The first wait once an account's free attempts are used up. */
export const FIRST_DELAY_MS = 1000;
/** The longest wait between two attempts. */
export const MAX_DELAY_MS = 15 * 60 * 1000;

/**
 * Failures a known browser (the "device cookie" of OWASP's authentication cheat sheet) may make
 * before it is no longer trusted: a stolen cookie buys at most this many guesses. Its owner's next
 * successful login replaces the cookie, so the count starts again from nothing.
 */
export const KNOWN_BROWSER_FAILURE_LIMIT = 5;
/** The known-browser cookie: HttpOnly, SameSite=Lax, Secure (setCookie), sent only to the login form's path. */
export const KNOWN_BROWSER_COOKIE = 'known_browser';
export const KNOWN_BROWSER_COOKIE_PATH = '/login';
/** How long a known-browser cookie lasts after the successful login that issued it. */
export const KNOWN_BROWSER_TTL_SECONDS = 30 * 86_400;

/**
 * The wait, in milliseconds, that `failures` failed attempts impose after the last of them: none
 * below `freeAttempts`, then one second, doubling with each further failure up to 15 minutes.
 */
export function delayAfterFailures(failures: number, freeAttempts = FREE_ATTEMPTS['account-address']): number {
  if (failures < freeAttempts) return 0;
  return Math.min(FIRST_DELAY_MS * 2 ** (failures - freeAttempts), MAX_DELAY_MS);
}

/** Milliseconds to wait at `now` before the next attempt the record allows (0: it may go ahead). */
export function waitOf(record: ThrottleRecord, now: number): number {
  if (record.failures < FREE_ATTEMPTS[record.scope]) return 0;
  return Math.max(0, record.nextAttemptAt - now);
}

/** Milliseconds to wait at `now` before the next attempt (0: it may go ahead): the strictest record wins. */
export function retryAfterMs(records: readonly ThrottleRecord[], now: number): number {
  return Math.max(0, ...records.map((record) => waitOf(record, now)));
}

/** The wait at `now` in whole seconds, rounded up, as `Retry-After` gives it (0: no wait). */
export function retryAfterSeconds(records: readonly ThrottleRecord[], now: number): number {
  return Math.ceil(retryAfterMs(records, now) / 1000);
}

/**
 * When the attempt after one more failure on `record` (reserved at `now`) may come. Below the free
 * attempts the value is only consulted once the count reaches them, so it is the first delay: that
 * stays right when concurrent reservations raised the count meanwhile, which the write allows there.
 */
export function nextAttemptAfterReserving(record: ThrottleRecord, now: number): number {
  const free = FREE_ATTEMPTS[record.scope];
  return now + delayAfterFailures(Math.max(record.failures + 1, free), free);
}
