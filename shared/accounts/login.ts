import {
  FREE_ATTEMPTS, KNOWN_BROWSER_FAILURE_LIMIT, KNOWN_BROWSER_TTL_SECONDS, nextAttemptAfterReserving, retryAfterSeconds,
} from '#shared/accounts/login-throttle';
import { verifyPassword } from '#shared/accounts/password';
import type { BatchReader } from '#shared/data/batch-read';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import { MAX_EMAIL_LENGTH } from '#shared/domain/user';
import { countMetric, METRIC } from '#shared/metrics';
import { signInAlertOf, type SignInAlert } from '#shared/accounts/sign-in-alert';

// Verified against when the account does not exist, so both cases take the same time: the hash of a
// random password nobody knows, with the same parameters as real hashes (precomputed: no scrypt at load).
const DECOY_HASH = 'scrypt$32768$8$1$dCKeGvzeAEzSqrQNyRa_UQ$T8Xmxk76qoBLfJI3A12KfEAoeDQ7tucmXgTpna0Z9-g';

export interface LoginAttempt {
  /** The address typed, normalized (normalizeEmail). */
  email: string;
  password: string;
  /** The client's IP address. */
  address: string;
  /** The browser, as describeBrowser names it (kept with the session, for the owner's list). */
  browser?: string;
  /** The known-browser cookie the browser sent, if any. */
  browserToken?: string;
  /** Epoch milliseconds. */
  now: number;
}

export type LoginOutcome =
  /**
   * A new session, and the browser's new known-browser token. `deleting`: the account is being
   * deleted, and the session opens only the deletion's page, to finish it (account-deletion.ts).
   */
  | { outcome: 'signed-in'; sessionId: string; knownBrowserToken: string; deleting: boolean; alert?: SignInAlert }
  /** The password was right and the account has a second factor: the sign-in waiting for it (its cookie value). */
  | { outcome: 'second-factor'; pendingSignIn: string }
  /** Too many failures: the wait, in whole seconds (Retry-After). */
  | { outcome: 'throttled'; retryAfterSeconds: number }
  /** A wrong password or an unknown account: the same outcome. */
  | { outcome: 'failed' };

/** The repository operations attemptLogin uses (its functions' grants: functions/needs.ts). */
export const LOGIN_USES = {
  throttle: ['recordsRead', 'reserve', 'creditItems'],
  knownBrowsers: ['knownBrowserRead', 'reserveKnownBrowser', 'newKnownBrowser', 'forgetKnownBrowserItem'],
  users: ['userIdOfEmailRead', 'getUserRecord', 'signedInItem'],
  sessions: ['createSession'],
  factors: ['startPendingSignIn'],
} as const satisfies UsesDeclaration;

/**
 * One login attempt. Before the password is checked, the attempt reserves one failure with a
 * conditional write, so concurrent requests cannot buy more guesses than the throttle allows; a
 * successful login gives it back. A browser that signed in to the account before (its known-browser
 * cookie) reserves on its own record, up to KNOWN_BROWSER_FAILURE_LIMIT failures, and is not held by
 * the account's or the address's records: an attacker elsewhere cannot lock its owner out. Any other
 * attempt reserves on the records of the account from this address, of the account and of the
 * address (login-throttle.ts). Requests: BatchGetItem (throttle records, e-mail item, known browser)
 * + the reservation (TransactWriteItems, or UpdateItem for a known browser) + GetItem (user); on
 * success a TransactWriteItems (session, known browser replaced, reservations given back). An
 * account with a second factor gets no session yet: the same transaction starts a sign-in that
 * waits for it (shared/accounts/second-factor.ts completes it), with the reservations given back
 * (the password was right); the known browser is replaced when the sign-in completes.
 */
export async function attemptLogin(
  repos: Uses<typeof LOGIN_USES> & { batch: BatchReader },
  { email, password, address, browser: browserName = 'An unknown browser', browserToken, now }: LoginAttempt,
): Promise<LoginOutcome> {
  const { batch, factors, knownBrowsers, sessions, throttle, users } = repos;
  // No account has a longer address, and a longer one would not fit in the throttle record's key.
  const account = email.length <= MAX_EMAIL_LENGTH ? email : '';
  const throttled = (seconds: number): LoginOutcome => {
    countMetric(METRIC.loginThrottled);
    return { outcome: 'throttled', retryAfterSeconds: seconds };
  };

  const [records, userId, browser] = await batch.read([
    throttle.recordsRead(account, address, now), users.userIdOfEmailRead(account), knownBrowsers.knownBrowserRead(browserToken, now),
  ] as const);
  const knownHere = browser !== undefined && userId !== undefined && browser.userId === userId && browser.failures < KNOWN_BROWSER_FAILURE_LIMIT;
  const asKnownBrowser = knownHere && await knownBrowsers.reserveKnownBrowser(browserToken!, userId, KNOWN_BROWSER_FAILURE_LIMIT, now);
  if (!asKnownBrowser) {
    const seconds = retryAfterSeconds(records, now);
    if (seconds > 0) return throttled(seconds);
    const reservations = records.map((record) => ({ record, freeAttempts: FREE_ATTEMPTS[record.scope], nextAttemptAt: nextAttemptAfterReserving(record, now) }));
    const outcome = await throttle.reserve(reservations, now);
    // Refused: a concurrent attempt took the last free one or started the wait (at least a second).
    if (!outcome.reserved) return throttled(Math.max(1, retryAfterSeconds(outcome.current, now)));
  }

  const record = userId ? await users.getUserRecord(userId) : undefined;
  const valid = await verifyPassword(password, record?.passwordHash ?? DECOY_HASH);
  if (!record || !valid) {
    // The reservation stays: it is the failure.
    countMetric(METRIC.loginFailures);
    return { outcome: 'failed' };
  }
  const credits = asKnownBrowser ? [] : throttle.creditItems(account, address, now);
  if (record.totpEnabled || record.passkeyCount > 0) return { outcome: 'second-factor', pendingSignIn: await factors.startPendingSignIn(record.user.id, new Date(now), credits) };
  // This browser becomes (or stays) the account's known browser, with a new token: a copy of the old one is worth nothing now.
  const known = knownBrowsers.newKnownBrowser(record.user.id, KNOWN_BROWSER_TTL_SECONDS, now);
  const details = { browser: browserName, address };
  const sessionId = await sessions.createSession(record.user.id, new Date(now), [
    known.item,
    ...(browser ? [knownBrowsers.forgetKnownBrowserItem(browserToken!)] : []),
    ...credits,
    users.signedInItem(record.user.id, new Date(now)),
  ], details);
  const alert = signInAlertOf(record, browser?.userId === record.user.id, details, now);
  return { outcome: 'signed-in', sessionId, knownBrowserToken: known.token, deleting: record.deleting, ...(alert ? { alert } : {}) };
}
