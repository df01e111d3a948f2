import {
  FREE_ATTEMPTS, KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_COOKIE_PATH, KNOWN_BROWSER_FAILURE_LIMIT, KNOWN_BROWSER_TTL_SECONDS,
  nextAttemptAfterReserving, retryAfterSeconds,
} from '#shared/accounts/login-throttle';
import { loginPage } from '#shared/views/oauth-pages';
import { verifyPassword } from '#shared/accounts/password';
import { batch, sessions, throttle, users } from '#shared/runtime';
import { redirectOriginOf, safeReturnTo, secure } from '#shared/accounts/session';
import { MAX_EMAIL_LENGTH, normalizeEmail } from '#shared/domain/user';
import { readCookie, SESSION_COOKIE, setCookie } from '#shared/http/cookies';
import { checkCsrf, csrfToken } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import { countMetric, METRIC } from '#shared/metrics';

// Verified against when the account does not exist, so both cases take the same time: the hash of a
// random password nobody knows, with the same parameters as real hashes (precomputed: no scrypt at load).
const DECOY_HASH = 'scrypt$32768$8$1$dCKeGvzeAEzSqrQNyRa_UQ$T8Xmxk76qoBLfJI3A12KfEAoeDQ7tucmXgTpna0Z9-g';

/**
 * POST /login. Before the password is checked, the attempt reserves one failure with a conditional
 * write, so concurrent requests cannot buy more guesses than the throttle allows; a successful login
 * gives it back. A browser that signed in to the account before (its known-browser cookie) reserves on
 * its own record, up to KNOWN_BROWSER_FAILURE_LIMIT failures, and is not held by the account's or the
 * address's records: an attacker elsewhere cannot lock its owner out. Any other attempt reserves on
 * the records of the account from this address, of the account and of the address (login-throttle.ts).
 * A wrong password and an unknown account get the same answer.
 * Requests: BatchGetItem (throttle records, e-mail item, known browser) + the reservation
 * (TransactWriteItems, or UpdateItem for a known browser) + GetItem (user); on success a
 * TransactWriteItems (session, known browser replaced, reservations given back).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const returnTo = safeReturnTo(form.return_to);
  const email = normalizeEmail(form.email ?? '');
  // No account has a longer address, and a longer one would not fit in the throttle record's key.
  const account = email.length <= MAX_EMAIL_LENGTH ? email : '';
  const address = event.requestContext.http.sourceIp;
  const browserToken = readCookie(event, KNOWN_BROWSER_COOKIE);
  const now = Date.now();
  const { token, cookies } = csrfToken(event, secure);
  const again = (error: string, status: number) =>
    loginPage({ returnTo, csrf: token, cookies, error, email, status, formTargets: redirectOriginOf(returnTo) });
  const throttled = (seconds: number) => {
    countMetric(METRIC.loginThrottled);
    const result = again(`Too many failed attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, 429);
    result.headers['retry-after'] = String(seconds);
    return result;
  };

  const [records, userId, browser] = await batch.read([
    throttle.recordsRead(account, address, now), users.userIdOfEmailRead(account), throttle.knownBrowserRead(browserToken, now),
  ] as const);
  const knownHere = browser !== undefined && userId !== undefined && browser.userId === userId && browser.failures < KNOWN_BROWSER_FAILURE_LIMIT;
  const asKnownBrowser = knownHere && await throttle.reserveKnownBrowser(browserToken!, userId, KNOWN_BROWSER_FAILURE_LIMIT, now);
  if (!asKnownBrowser) {
    const seconds = retryAfterSeconds(records, now);
    if (seconds > 0) return throttled(seconds);
    const reservations = records.map((record) => ({ record, freeAttempts: FREE_ATTEMPTS[record.scope], nextAttemptAt: nextAttemptAfterReserving(record, now) }));
    const outcome = await throttle.reserve(reservations, now);
    // Refused: a concurrent attempt took the last free one or started the wait (at least a second).
    if (!outcome.reserved) return throttled(Math.max(1, retryAfterSeconds(outcome.current, now)));
  }

  const record = userId ? await users.getUserRecord(userId) : undefined;
  const valid = await verifyPassword(form.password ?? '', record?.passwordHash ?? DECOY_HASH);
  if (!record || !valid) {
    // The reservation stays: it is the failure.
    countMetric(METRIC.loginFailures);
    return again('Incorrect e-mail address or password.', 401);
  }
  // This browser becomes (or stays) the account's known browser, with a new cookie: a copy of the old one is worth nothing now.
  const known = throttle.newKnownBrowser(record.user.id, KNOWN_BROWSER_TTL_SECONDS, now);
  const sessionId = await sessions.createSession(record.user.id, new Date(now), [
    known.item,
    ...(browser ? [throttle.forgetKnownBrowserItem(browserToken!)] : []),
    ...(asKnownBrowser ? [] : throttle.creditItems(account, address, now)),
  ]);
  return redirect(returnTo, 303, [
    setCookie(SESSION_COOKIE, sessionId, { secure, maxAgeSeconds: SESSION_TTL_SECONDS }),
    setCookie(KNOWN_BROWSER_COOKIE, known.token, { secure, maxAgeSeconds: KNOWN_BROWSER_TTL_SECONDS, path: KNOWN_BROWSER_COOKIE_PATH }),
  ]);
});
