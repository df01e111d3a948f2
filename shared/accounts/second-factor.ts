import { FREE_ATTEMPTS, KNOWN_BROWSER_TTL_SECONDS, nextAttemptAfterReserving, retryAfterSeconds } from '#shared/accounts/login-throttle';
import { newRecoveryCodes, readFactorCode, recoveryCodeHash, totpStepOf } from '#shared/accounts/totp';
import { openWith, sealWith } from '#shared/oauth/sealing';
import { signInAlertOf, type SignInAlert } from '#shared/accounts/sign-in-alert';
import { randomToken } from '#shared/secrets';
import { allOf, type BatchRead, type BatchReader } from '#shared/data/batch-read';
import { cancellationCodes } from '#shared/data/dynamodb';
import type { Factors } from '#shared/data/factor-repo';
import { pendingSignInUserId } from '#shared/data/pending-sign-in-repo';
import type { SessionDetails } from '#shared/data/session-repo';
import { greeting } from '#shared/email/mail-text';
import type { Mailer } from '#shared/email/mailer';
import type { ThrottleRecord } from '#shared/data/throttle-repo';
import { countMetric, METRIC } from '#shared/metrics';
import type { Uses, UsesDeclaration } from '#shared/data/uses';

/** Why a second factor was refused (each with its own message on the page). */
export type FactorFailure = 'wrong' | 'used' | 'malformed';

export type SecondFactorOutcome =
  /** The session, and the browser's new known-browser token. */
  | { outcome: 'signed-in'; sessionId: string; knownBrowserToken: string; alert?: SignInAlert }
  /** No sign-in waits for a second factor here (never started, expired or completed): sign in again. */
  | { outcome: 'expired' }
  /** Refused, with the e-mail address of the account signing in (`account`), for the page that says why. */
  | { outcome: 'throttled'; retryAfterSeconds: number; account?: string }
  | { outcome: 'failed'; failure: FactorFailure; account?: string };

/** A code checked against the factors: what spends it, or why it is refused. */
export type CheckedCode =
  | { ok: true; spend: { step: number } | { recoveryCodeHash: string } }
  | { ok: false; failure: FactorFailure };

/**
 * Checks what was typed in a second-factor field against the account's factors, without spending it:
 * an authenticator code of a step after the last one used (one used already is `used`), or one of
 * the recovery codes left.
 */
export function checkFactorCode(userId: string, factors: Factors, typed: string, now: number): CheckedCode {
  const code = readFactorCode(typed);
  if (code.kind === 'malformed') return { ok: false, failure: 'malformed' };
  if (code.kind === 'recovery') {
    const hash = recoveryCodeHash(userId, code.code);
    return factors.recoveryCodeHashes.includes(hash) ? { ok: true, spend: { recoveryCodeHash: hash } } : { ok: false, failure: 'wrong' };
  }
  if (!factors.totp) return { ok: false, failure: 'wrong' };
  const step = totpStepOf(factors.totp.secret, code.code, now, factors.totp.lastStep);
  if (step !== undefined) return { ok: true, spend: { step } };
  return { ok: false, failure: totpStepOf(factors.totp.secret, code.code, now, -1) === undefined ? 'wrong' : 'used' };
}

/** The repository operations completeSignIn uses (its functions' grants: functions/needs.ts). */
export const COMPLETE_SIGN_IN_USES = {
  factors: ['pendingSignInRead', 'factorsRead', 'useTotpStepItem', 'useRecoveryCodeItem', 'endPendingSignInItem'],
  throttle: ['secondFactorRecordRead', 'reserve', 'secondFactorCreditItem'],
  knownBrowsers: ['knownBrowserRead', 'newKnownBrowser', 'forgetKnownBrowserItem'],
  sessions: ['createSession'],
  users: ['signInProfileRead', 'signedInItem'],
} as const satisfies UsesDeclaration;

/**
 * The second step of a sign-in whose password was right: an authenticator code or a recovery code.
 * Like the password, every attempt first reserves one failure on the account's second-factor record
 * with a conditional write (login-throttle.ts: 5 free, then 1 s doubling up to 15 minutes), so
 * concurrent attempts buy no extra guesses; only then is the code checked. A right code is spent in
 * the transaction that starts the session, by a conditional write (an authenticator code's step must
 * be after the last one used; a recovery code must still be in the set): of two requests with one
 * code, one signs in and the other is told the code was used. Requests: BatchGetItem (the pending
 * sign-in, the factors, the throttle record, the known browser, the user), UpdateItem (the
 * reservation), and on a right code one TransactWriteItems (session, pending sign-in ended, code
 * spent, reservation given back, known browser replaced, the user's last sign-in). A browser new to
 * the account gets its owner an alert (`alert`, for the handler to send).
 */
export async function completeSignIn(
  repos: Uses<typeof COMPLETE_SIGN_IN_USES> & { batch: BatchReader },
  attempt: { pendingSignIn: string | undefined; typed: string; browserToken: string | undefined; now: number; client?: SessionDetails },
): Promise<SecondFactorOutcome> {
  const { batch, factors, knownBrowsers, sessions, throttle, users } = repos;
  const { pendingSignIn, typed, browserToken, now, client } = attempt;
  const userId = pendingSignInUserId(pendingSignIn);
  if (!userId) return { outcome: 'expired' };
  const [pending, stored, record, browser, profile] = await batch.read([
    factors.pendingSignInRead(pendingSignIn, new Date(now)), factors.factorsRead(userId), throttle.secondFactorRecordRead(userId, now),
    knownBrowsers.knownBrowserRead(browserToken, now), users.signInProfileRead(userId),
  ] as const);
  if (!pending) return { outcome: 'expired' };
  const account = profile?.user.email;
  const throttled = (seconds: number): SecondFactorOutcome => {
    countMetric(METRIC.loginThrottled);
    return { outcome: 'throttled', retryAfterSeconds: seconds, account };
  };
  const wait = retryAfterSeconds([record], now);
  if (wait > 0) return throttled(wait);
  const reserved = await throttle.reserve([{ record, freeAttempts: FREE_ATTEMPTS['second-factor'], nextAttemptAt: nextAttemptAfterReserving(record, now) }], now);
  if (!reserved.reserved) return throttled(Math.max(1, retryAfterSeconds(reserved.current, now)));

  const checked = checkFactorCode(userId, stored, typed, now);
  if (!checked.ok) {
    countMetric(METRIC.loginFailures);
    return { outcome: 'failed', failure: checked.failure, account };
  }
  const spend = 'step' in checked.spend
    ? factors.useTotpStepItem(userId, checked.spend.step)
    : factors.useRecoveryCodeItem(userId, checked.spend.recoveryCodeHash);
  const known = knownBrowsers.newKnownBrowser(userId, KNOWN_BROWSER_TTL_SECONDS, now);
  try {
    // Items after the session's Put (index 0): the pending sign-in (1), the code (2).
    const sessionId = await sessions.createSession(userId, new Date(now), [
      factors.endPendingSignInItem(pendingSignIn!, new Date(now)),
      spend,
      throttle.secondFactorCreditItem(userId, now),
      known.item,
      ...(browser ? [knownBrowsers.forgetKnownBrowserItem(browserToken!)] : []),
      users.signedInItem(userId, new Date(now)),
    ], client);
    const alert = client && signInAlertOf(profile, browser?.userId === userId, client, now);
    return { outcome: 'signed-in', sessionId, knownBrowserToken: known.token, ...(alert ? { alert } : {}) };
  } catch (error) {
    // Only a cancelled transaction has cancellation reasons: any other error is thrown below.
    const codes = cancellationCodes(error);
    if (codes[1] === 'ConditionalCheckFailed') return { outcome: 'expired' };
    if (codes[2] === 'ConditionalCheckFailed') {
      countMetric(METRIC.loginFailures);
      return { outcome: 'failed', failure: 'used', account };
    }
    throw error;
  }
}

export type RemoveOutcome =
  | { outcome: 'removed' }
  | { outcome: 'not-enrolled' }
  /** Refused: with the factors as read, for the page that says why. */
  | { outcome: 'throttled'; retryAfterSeconds: number; stored: Factors }
  | { outcome: 'failed'; failure: FactorFailure; stored: Factors };

/** The repository operations removalRead uses. */
export const REMOVAL_READ_USES = { factors: ['factorsRead'], throttle: ['secondFactorRecordRead'] } as const satisfies UsesDeclaration;

/**
 * What turning the authenticator app off reads first (the factors and the second-factor throttle
 * record), as part of a combined read: a page reads it with its session (`reads.ofUser`).
 */
export function removalRead(
  repos: Uses<typeof REMOVAL_READ_USES>, userId: string, now: number,
): BatchRead<readonly [Factors, ThrottleRecord]> {
  return allOf([repos.factors.factorsRead(userId), repos.throttle.secondFactorRecordRead(userId, now)] as const);
}

/** The repository operations removeAuthenticator uses, removalRead's among them (its function's grants: functions/needs.ts). */
export const REMOVE_AUTHENTICATOR_USES = [REMOVAL_READ_USES, { factors: ['removeTotp'], throttle: ['reserve'] }] as const satisfies UsesDeclaration;

/**
 * Turns the authenticator app off (and its recovery codes), which asks a fresh second factor: a code
 * of the app or a recovery code, throttled and spent as at sign-in (a session alone, left open on a
 * shared computer, cannot remove the account's second factor). Requests: BatchGetItem (factors,
 * throttle record: removalRead, none when `read` is its answer already), UpdateItem (the
 * reservation), TransactWriteItems (the factor and the codes deleted, the code spent by the delete's
 * condition, the user's flag off).
 */
export async function removeAuthenticator(
  repos: Uses<typeof REMOVE_AUTHENTICATOR_USES> & { batch: BatchReader },
  userId: string, typed: string, now: number, read?: readonly [Factors, ThrottleRecord],
): Promise<RemoveOutcome> {
  const { batch, factors, throttle } = repos;
  const [stored, record] = read ?? (await batch.read([removalRead(repos, userId, now)] as const))[0];
  if (!stored.totp) return { outcome: 'not-enrolled' };
  const wait = retryAfterSeconds([record], now);
  if (wait > 0) return { outcome: 'throttled', retryAfterSeconds: wait, stored };
  const reserved = await throttle.reserve([{ record, freeAttempts: FREE_ATTEMPTS['second-factor'], nextAttemptAt: nextAttemptAfterReserving(record, now) }], now);
  if (!reserved.reserved) return { outcome: 'throttled', retryAfterSeconds: Math.max(1, retryAfterSeconds(reserved.current, now)), stored };
  const checked = checkFactorCode(userId, stored, typed, now);
  if (!checked.ok) return { outcome: 'failed', failure: checked.failure, stored };
  const removed = await factors.removeTotp(userId, checked.spend);
  return removed.done ? { outcome: 'removed' } : { outcome: 'failed', failure: 'used', stored };
}

/** What the page says for each refusal of a second factor. */
export const FACTOR_FAILURE_MESSAGES: Record<FactorFailure, string> = {
  wrong: 'That code is not right. Check the code your authenticator app shows now, or a recovery code, and try again.',
  used: 'That code was used already. Wait for your authenticator app to show the next code, then enter it.',
  malformed: 'Enter the 6-digit code your authenticator app shows, or a recovery code like abcd-efgh-jkmn-pqrs.',
};

/** The repository operations enrolAuthenticator uses (its function's grants: functions/needs.ts). */
export const ENROL_AUTHENTICATOR_USES = { factors: ['enrolTotp'] } as const satisfies UsesDeclaration;

/**
 * Completes an authenticator app's enrolment with its first code (of the enrolment's secret, at
 * `now`): the factor, 10 new recovery codes stored as hashes, the same codes sealed under a new key
 * for their one showing, and the user's flag, in one transaction (FactorRepo.enrolTotp). Returns the
 * key (for the browser's cookie: without it the sealed codes are nothing), or why not.
 */
export async function enrolAuthenticator(
  factors: Uses<typeof ENROL_AUTHENTICATOR_USES>['factors'], userId: string, secret: string, typed: string, now: number,
): Promise<{ outcome: 'enrolled'; revealKey: string } | { outcome: 'wrong' } | { outcome: 'already' }> {
  const code = readFactorCode(typed);
  // Stryker disable next-line ConditionalExpression: totpStepOf refuses anything but six digits, as a recovery code or nothing is
  const step = code.kind === 'totp' ? totpStepOf(secret, code.code, now, -1) : undefined;
  if (step === undefined) return { outcome: 'wrong' };
  const codes = newRecoveryCodes();
  const revealKey = randomToken();
  const enrolled = await factors.enrolTotp({
    userId, secret, step, recoveryCodeHashes: codes.map((c) => recoveryCodeHash(userId, c)), sealedCodes: sealWith(revealKey, codes.join('\n')), now: new Date(now),
  });
  return enrolled ? { outcome: 'enrolled', revealKey } : { outcome: 'already' };
}

/** The recovery codes sealed under `key` (enrolAuthenticator), or undefined when the key is not theirs. */
export function openRecoveryCodes(key: string, sealed: string): string[] | undefined {
  try {
    return openWith(key, sealed).split('\n');
  } catch {
    // Sealed under another key.
  }
  return undefined;
}

/** The repository operations resetFactorsByOperator uses (the admin tool's, through shared/runtime.ts). */
export const RESET_FACTORS_USES = {
  users: ['findUserByEmail'], factors: ['removeAllFactors'], passkeys: ['removeAllPasskeys'], sessions: ['sessionKeysOf', 'endSessions'],
} as const satisfies UsesDeclaration;

/**
 * The operator's path for a user who lost every second factor (`npm run admin -- reset-factors`),
 * after the operator has checked who is asking by means outside the service: every factor removed
 * and the flag off (one transaction), every session ended (the account signs in again with its
 * password alone), and an e-mail to the account's address saying so, so that the real owner learns
 * of a reset someone else talked the operator into. Undefined when the address has no account.
 */
export async function resetFactorsByOperator(
  deps: Uses<typeof RESET_FACTORS_USES> & { mailer: Mailer; issuer: string }, email: string,
): Promise<{ userId: string; sessionsEnded: number; passkeysRemoved: number } | undefined> {
  const record = await deps.users.findUserByEmail(email);
  if (!record) return undefined;
  const { user } = record;
  await deps.factors.removeAllFactors(user.id);
  const passkeysRemoved = await deps.passkeys.removeAllPasskeys(user.id);
  const sessions = await deps.sessions.sessionKeysOf(user.id);
  await deps.sessions.endSessions(sessions);
  await deps.mailer.send({
    to: user.email,
    subject: 'Two-step sign-in was turned off',
    text: `${greeting(user.firstname)}\n\nAt a request made to our support, two-step sign-in was turned off for your account, its passkeys were removed, and every browser signed in to it was signed out. `
      + `Your password alone signs you in now.\n\nIf you asked for this, set up two-step sign-in again: ${deps.issuer}/account/security\n\n`
      + `If you did not ask for this, someone may be trying to take over your account: choose a new password now at ${deps.issuer}/password-reset and tell our support.\n`,
  });
  return { userId: user.id, sessionsEnded: sessions.length, passkeysRemoved };
}
