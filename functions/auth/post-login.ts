import { retryAfterSeconds } from '#shared/auth/login-throttle';
import { loginPage } from '#shared/auth/pages';
import { verifyPassword } from '#shared/auth/password';
import { batch, sessions, throttle, users } from '#shared/auth/runtime';
import { redirectOriginOf, safeReturnTo, secure } from '#shared/auth/web';
import { MAX_EMAIL_LENGTH, normalizeEmail } from '#shared/domain/user';
import { SESSION_COOKIE, setCookie } from '#shared/http/cookies';
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
 * POST /login. Failures are throttled per account and per client address with growing delays;
 * a wrong password and an unknown account get the same answer. A login reads both throttle records
 * and the e-mail address in one BatchGetItem, then the user (GetItem), then starts a session (PutItem).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const returnTo = safeReturnTo(form.return_to);
  const email = normalizeEmail(form.email ?? '');
  // No account has a longer address, and a longer one would not fit in the throttle record's key.
  const account = email.length <= MAX_EMAIL_LENGTH ? email : '';
  const address = event.requestContext.http.sourceIp;
  const now = Date.now();
  const { token, cookies } = csrfToken(event, secure);
  const again = (error: string, status: number) =>
    loginPage({ returnTo, csrf: token, cookies, error, email, status, formTargets: redirectOriginOf(returnTo) });

  const [failures, userId] = await batch.read([throttle.failuresRead(account, address, now), users.userIdOfEmailRead(account)] as const);
  const seconds = retryAfterSeconds(failures, now);
  if (seconds > 0) {
    countMetric(METRIC.loginThrottled);
    const result = again(`Too many failed attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, 429);
    result.headers['retry-after'] = String(seconds);
    return result;
  }
  const record = userId ? await users.getUserRecord(userId) : undefined;
  const valid = await verifyPassword(form.password ?? '', record?.passwordHash ?? DECOY_HASH);
  if (!record || !valid) {
    await throttle.recordFailure(account, address, now);
    countMetric(METRIC.loginFailures);
    return again('Incorrect e-mail address or password.', 401);
  }
  if (failures.some((r) => r.kind === 'account')) await throttle.clearAccount(account);
  const sessionId = await sessions.createSession(record.user.id);
  return redirect(returnTo, 303, [setCookie(SESSION_COOKIE, sessionId, { secure, maxAgeSeconds: SESSION_TTL_SECONDS })]);
});
