import { FREE_ATTEMPTS, nextAttemptAfterReserving, retryAfterSeconds } from '#shared/accounts/login-throttle';
import { verifyPassword } from '#shared/accounts/password';
import type { BatchReader } from '#shared/data/batch-read';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { User } from '#shared/domain/user';
import { countMetric, METRIC } from '#shared/metrics';

/** What the signed-in person gives to prove, once more, that they own the account. */
export interface IdentityProof {
  password: string;
  /** The client's IP address (the throttle counts per account, per address, and both). */
  address: string;
  /** Epoch milliseconds. */
  now: number;
}

export type IdentityCheck =
  | { outcome: 'confirmed' }
  /** A wrong password: counted as a failed login. */
  | { outcome: 'wrong-password' }
  /** Too many failures: the wait, in whole seconds (Retry-After). */
  | { outcome: 'throttled'; retryAfterSeconds: number };

/** The repository operations confirmIdentity uses (its functions' grants: functions/needs.ts). */
export const CONFIRM_IDENTITY_USES = { throttle: ['recordsRead', 'reserve', 'credit'], users: ['getPasswordHash'] } as const satisfies UsesDeclaration;

/**
 * Confirms that the person behind a signed-in session is the account's owner, before an
 * irreversible act (deleting the account). Today it checks the password, as a login does and within
 * the same throttle: a failure is reserved on the records of the account from this address, of the
 * account and of the address before the password is checked (login-throttle.ts), so a stolen session
 * buys no more guesses here than at the login form, and a confirmed password gives it back. A second
 * factor, once accounts have one, is checked here too, and every caller gets it.
 * Requests: BatchGetItem (throttle records) + TransactWriteItems (the reservation) + GetItem (the
 * password hash), and TransactWriteItems (the credit) when confirmed.
 */
export async function confirmIdentity(
  repos: Uses<typeof CONFIRM_IDENTITY_USES> & { batch: BatchReader },
  user: User,
  { password, address, now }: IdentityProof,
): Promise<IdentityCheck> {
  const { batch, throttle, users } = repos;
  const throttled = (seconds: number): IdentityCheck => {
    countMetric(METRIC.loginThrottled);
    return { outcome: 'throttled', retryAfterSeconds: seconds };
  };
  const [records] = await batch.read([throttle.recordsRead(user.email, address, now)] as const);
  const wait = retryAfterSeconds(records, now);
  if (wait > 0) return throttled(wait);
  const reservations = records.map((record) => ({ record, freeAttempts: FREE_ATTEMPTS[record.scope], nextAttemptAt: nextAttemptAfterReserving(record, now) }));
  const outcome = await throttle.reserve(reservations, now);
  if (!outcome.reserved) return throttled(Math.max(1, retryAfterSeconds(outcome.current, now)));

  const hash = await users.getPasswordHash(user.id);
  if (hash === undefined || !(await verifyPassword(password, hash))) {
    // The reservation stays: it is the failure.
    countMetric(METRIC.loginFailures);
    return { outcome: 'wrong-password' };
  }
  await throttle.credit(user.email, address, now);
  return { outcome: 'confirmed' };
}
