import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { checkFactorCode, completeSignIn, enrolAuthenticator, openRecoveryCodes, removeAuthenticator } from '#shared/accounts/second-factor';
import { newTotpSecret, recoveryCodeHash, totpStep } from '#shared/accounts/totp';
import { RECOVERY_REVEAL_SECONDS, TOTP_ENROLMENT_SECONDS } from '#shared/data/factor-repo';
import { PENDING_SIGN_IN_SECONDS, pendingSignInUserId } from '#shared/data/pending-sign-in-repo';
import { knownBrowserKey, pendingSignInKey, recoveryCodesKey, recoveryRevealKey, throttleKey, totpKey, userKey } from '#shared/data/item-keys';
import { createUserRepo } from '#shared/data/user-repo';
import type { User } from '#shared/domain/user';
import { hashSecret } from '#shared/secrets';
import { countRequests } from '../support/count-requests';
import { withFailure } from '../support/inject-failure';
import { throttled } from '../support/token-service';
import { userNamed } from '../support/factories';
import { totpCodeAt as codeAt } from '../support/two-step';
import { useRepoTable } from '../support/repos';

const NOW = 1_800_000_010_000; // epoch ms, 10 s into a 30 s step

describe('second factors on DynamoDB Local', () => {
  const { doc, table, repos: { factors, knownBrowsers, sessions, throttle }, batch } = useRepoTable();

  const item = async (key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  const read = async (userId: string) => (await batch.read([factors.factorsRead(userId)] as const))[0];

  /** A user with an authenticator app enrolled at NOW; its secret and recovery codes. */
  async function enrolled(): Promise<{ user: User; secret: string; codes: string[] }> {
    const user = userNamed('Tess', 'Totp');
    await createUserRepo({ doc, table }).createUser(user, 'scrypt$hash');
    const secret = newTotpSecret();
    await factors.startTotpEnrolment(user.id, secret, new Date(NOW));
    const result = await enrolAuthenticator(factors, user.id, secret, codeAt(secret, NOW), NOW);
    expect(result.outcome).toBe('enrolled');
    const sealed = await factors.takeRecoveryReveal(user.id, new Date(NOW));
    const codes = openRecoveryCodes((result as { revealKey: string }).revealKey, sealed!)!;
    return { user, secret, codes };
  }

  describe('enrolment', () => {
    it('waits 15 minutes for the first code, then reads as absent', async () => {
      const userId = randomUUID();
      await factors.startTotpEnrolment(userId, 'SECRET', new Date(NOW));
      const enrolment = async (at: number) => (await batch.read([factors.totpEnrolmentRead(userId, new Date(at))] as const))[0];
      expect(await enrolment(NOW + TOTP_ENROLMENT_SECONDS * 1000 - 1000)).toBe('SECRET');
      expect(await enrolment(NOW + TOTP_ENROLMENT_SECONDS * 1000)).toBeUndefined();
    });

    it('writes the factor, 10 hashed codes, the codes to show and the flag in one transaction; the first code’s step is spent', async () => {
      const { user, secret, codes } = await enrolled();
      const stored = await read(user.id);
      expect(stored.totp).toMatchObject({ secret, lastStep: totpStep(NOW) });
      expect(stored.recoveryCodeHashes.sort()).toEqual(codes.map((c) => recoveryCodeHash(user.id, c)).sort());
      expect((await createUserRepo({ doc, table }).getUserRecord(user.id))?.totpEnabled).toBe(true);
      // Shown once: taken already by enrolled()
      expect(await factors.takeRecoveryReveal(user.id, new Date(NOW))).toBeUndefined();
      expect(await item(recoveryRevealKey(user.id))).toBeUndefined();
    });

    it('refuses a second enrolment, one whose secret changed, and a wrong or malformed code, writing nothing', async () => {
      const { user } = await enrolled();
      const secret = newTotpSecret();
      await factors.startTotpEnrolment(user.id, secret, new Date(NOW));
      expect(await enrolAuthenticator(factors, user.id, secret, codeAt(secret, NOW), NOW)).toEqual({ outcome: 'already' });
      expect((await read(user.id)).totp?.secret).not.toBe(secret);

      const other = userNamed('Tess', 'Totp');
      await createUserRepo({ doc, table }).createUser(other, 'scrypt$hash');
      await factors.startTotpEnrolment(other.id, secret, new Date(NOW));
      const anotherSecret = newTotpSecret();
      expect(await enrolAuthenticator(factors, other.id, anotherSecret, codeAt(anotherSecret, NOW), NOW)).toEqual({ outcome: 'already' });
      expect(await enrolAuthenticator(factors, other.id, secret, 'abcdef', NOW)).toEqual({ outcome: 'wrong' });
      expect(await enrolAuthenticator(factors, other.id, secret, codeAt(secret, NOW - 120_000), NOW)).toEqual({ outcome: 'wrong' });
      expect((await read(other.id)).totp).toBeUndefined();
      expect(await item(userKey(other.id))).not.toHaveProperty('totpEnabled');
    });

    it('does not open the codes with another key', async () => {
      expect(openRecoveryCodes('another key', 'a.b.c')).toBeUndefined();
    });
  });

  describe('checking a code', () => {
    it('takes the next step’s code, calls a spent one used, and a recovery code of the set', async () => {
      const { user, secret, codes } = await enrolled();
      const stored = await read(user.id);
      expect(checkFactorCode(user.id, stored, codeAt(secret, NOW + 30_000), NOW + 30_000)).toEqual({ ok: true, spend: { step: totpStep(NOW) + 1 } });
      expect(checkFactorCode(user.id, stored, codeAt(secret, NOW), NOW)).toEqual({ ok: false, failure: 'used' });
      expect(checkFactorCode(user.id, stored, codes[2]!, NOW)).toEqual({ ok: true, spend: { recoveryCodeHash: recoveryCodeHash(user.id, codes[2]!) } });
      expect(checkFactorCode(user.id, stored, 'abcd-efgh-jkmn-pqrs', NOW)).toEqual({ ok: false, failure: 'wrong' });
      expect(checkFactorCode(user.id, stored, 'nope', NOW)).toEqual({ ok: false, failure: 'malformed' });
      expect(checkFactorCode(user.id, { recoveryCodeHashes: [] }, '123456', NOW)).toEqual({ ok: false, failure: 'wrong' });
      const wrong = String((Number(codeAt(secret, NOW + 30_000)) + 1) % 1_000_000).padStart(6, '0');
      expect(checkFactorCode(user.id, stored, wrong, NOW + 30_000)).toEqual({ ok: false, failure: 'wrong' });
    });
  });

  describe('completing a sign-in', () => {
    async function pending(userId: string, at = NOW) {
      return factors.startPendingSignIn(userId, new Date(at));
    }
    const attempt = (pendingSignIn: string | undefined, typed: string, now: number, browserToken?: string) =>
      completeSignIn({ batch, factors, knownBrowsers, sessions, throttle, users: createUserRepo({ doc, table }) }, { pendingSignIn, typed, browserToken, now });

    it('starts the session with the code spent, the pending sign-in ended and the reservation given back', async () => {
      const { user, secret } = await enrolled();
      const token = await pending(user.id);
      const at = NOW + 30_000;
      const result = await attempt(token, codeAt(secret, at), at);
      expect(result.outcome).toBe('signed-in');
      expect((result as { sessionId: string }).sessionId.startsWith(`${user.id}.`)).toBe(true);
      expect((await read(user.id)).totp?.lastStep).toBe(totpStep(at));
      expect(await item(pendingSignInKey(hashSecret(token)))).toBeUndefined();
      expect((await item(throttleKey('second-factor', user.id)))?.failures).toBe(0);
      // The same pending sign-in cannot complete twice.
      expect(await attempt(token, codeAt(secret, at + 30_000), at + 30_000)).toEqual({ outcome: 'expired' });
    });

    it('refuses a pending sign-in past its 5 minutes, a malformed or unknown cookie, and one of another user', async () => {
      const { user, secret } = await enrolled();
      const token = await pending(user.id);
      const late = NOW + PENDING_SIGN_IN_SECONDS * 1000;
      expect(await attempt(token, codeAt(secret, late), late)).toEqual({ outcome: 'expired' });
      expect(await attempt(undefined, '123456', NOW)).toEqual({ outcome: 'expired' });
      expect(await attempt('not-a-cookie', '123456', NOW)).toEqual({ outcome: 'expired' });
      expect(await attempt(`${user.id}.${'A'.repeat(43)}`, '123456', NOW)).toEqual({ outcome: 'expired' });
      const other = await enrolled();
      const forged = `${other.user.id}${token.slice(user.id.length)}`;
      expect(pendingSignInUserId(forged)).toBe(other.user.id);
      expect(await attempt(forged, codeAt(other.secret, NOW + 30_000), NOW + 30_000)).toEqual({ outcome: 'expired' });
    });

    it('takes a recovery code once; a wrong code leaves its reservation as the failure', async () => {
      const { user, codes } = await enrolled();
      expect((await attempt(await pending(user.id), codes[0]!, NOW)).outcome).toBe('signed-in');
      expect(await attempt(await pending(user.id), codes[0]!, NOW)).toMatchObject({ outcome: 'failed', failure: 'wrong' });
      expect((await read(user.id)).recoveryCodeHashes).toHaveLength(9);
      expect((await item(throttleKey('second-factor', user.id)))?.failures).toBe(1);
    });

    it('tells a code spent by a concurrent sign-in (its transaction’s condition) from a pending sign-in gone', async () => {
      const { user, secret } = await enrolled();
      const at = NOW + 30_000;
      const [a, b] = [await pending(user.id), await pending(user.id)];
      const results = await Promise.all([attempt(a, codeAt(secret, at), at), attempt(b, codeAt(secret, at), at)]);
      expect(results.map((r) => r.outcome).sort()).toEqual(['failed', 'signed-in']);
      expect(results.find((r) => r.outcome === 'failed')).toMatchObject({ outcome: 'failed', failure: 'used' });
    });

    it('holds attempts after 5 failures, with the wait in whole seconds', async () => {
      const { user, secret } = await enrolled();
      const token = await pending(user.id);
      for (let i = 0; i < 5; i++) expect((await attempt(token, 'x', NOW)).outcome).toBe('failed');
      expect(await attempt(token, codeAt(secret, NOW + 500), NOW + 500)).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 1 });
      // Later failures wait longer: 9 failures, 16 s; once over, the next attempt is checked again.
      await doc.send(new PutCommand({ TableName: table, Item: { ...throttleKey('second-factor', user.id), failures: 9, nextAttemptAt: NOW + 16_000, expiresAt: NOW / 1000 + 86_400 } }));
      expect(await attempt(token, 'x', NOW + 1000)).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 15 });
      expect(await attempt(token, 'x', NOW + 16_000)).toMatchObject({ outcome: 'failed', failure: 'malformed' });
      expect((await item(throttleKey('second-factor', user.id)))?.failures).toBe(10);
      expect(Number((await item(throttleKey('second-factor', user.id)))?.nextAttemptAt)).toBe(NOW + 16_000 + 32_000);
    });
  });

  describe('turning it off', () => {
    it('asks for a fresh code: refused codes change nothing, the right one removes the factor, its codes and the flag', async () => {
      const { user, secret, codes } = await enrolled();
      const remove = (typed: string, now: number) => removeAuthenticator({ batch, factors, throttle }, user.id, typed, now);
      expect(await remove(codeAt(secret, NOW), NOW)).toMatchObject({ outcome: 'failed', failure: 'used' });
      expect(await remove('not a code', NOW)).toMatchObject({ outcome: 'failed', failure: 'malformed' });
      expect((await read(user.id)).totp).toBeDefined();
      expect(await remove(codes[1]!, NOW)).toEqual({ outcome: 'removed' });
      expect(await read(user.id)).toEqual({ totp: undefined, recoveryCodeHashes: [] });
      expect((await createUserRepo({ doc, table }).getUserRecord(user.id))?.totpEnabled).toBe(false);
      expect(await remove(codes[2]!, NOW)).toEqual({ outcome: 'not-enrolled' });
    });

    it('is spent by the removal’s own condition: a code used meanwhile is refused', async () => {
      const { user, secret } = await enrolled();
      const at = NOW + 30_000;
      expect(await factors.removeTotp(user.id, { step: totpStep(NOW) })).toEqual({ done: false, refusal: 'code-used' });
      expect(await factors.removeTotp(user.id, { recoveryCodeHash: 'not one of them' })).toEqual({ done: false, refusal: 'code-used' });
      expect(await item(totpKey(user.id))).toBeDefined();
      expect(await factors.removeTotp(user.id, { step: totpStep(at) })).toEqual({ done: true });
      expect(codeAt(secret, at)).toMatch(/^\d{6}$/);
    });

    it('removes every factor at an operator’s reset, and says whether the account exists', async () => {
      const { user } = await enrolled();
      expect(await factors.removeAllFactors(user.id)).toBe(true);
      expect(await read(user.id)).toEqual({ totp: undefined, recoveryCodeHashes: [] });
      expect(await factors.removeAllFactors(randomUUID())).toBe(false);
    });
  });
  describe('the repository’s edges', () => {
    const storageDown = <T>(command: string, act: () => Promise<T>) => withFailure(doc, command, throttled, act);

    it('shows new recovery codes for 10 minutes', async () => {
      const start = async () => {
        const user = userNamed('Tess', 'Totp');
        await createUserRepo({ doc, table }).createUser(user, 'scrypt$hash');
        const secret = newTotpSecret();
        await factors.startTotpEnrolment(user.id, secret, new Date(NOW));
        expect((await enrolAuthenticator(factors, user.id, secret, codeAt(secret, NOW), NOW)).outcome).toBe('enrolled');
        return user.id;
      };
      const [shown, late] = [await start(), await start()];

      expect(await factors.takeRecoveryReveal(shown, new Date(NOW + RECOVERY_REVEAL_SECONDS * 1000 - 1000))).toEqual(expect.any(String));
      expect(await factors.takeRecoveryReveal(late, new Date(NOW + RECOVERY_REVEAL_SECONDS * 1000))).toBeUndefined();
    });

    it('throws a storage failure instead of taking it for a refusal', async () => {
      const { user } = await enrolled();
      const other = userNamed('Tess', 'Totp');
      await createUserRepo({ doc, table }).createUser(other, 'scrypt$hash');
      const secret = newTotpSecret();
      await factors.startTotpEnrolment(other.id, secret, new Date(NOW));
      const failed = { status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } };

      expect(await storageDown('DeleteItemCommand', () => factors.takeRecoveryReveal(user.id, new Date(NOW)))).toMatchObject(failed);
      expect(await storageDown('TransactWriteItemsCommand', () => enrolAuthenticator(factors, other.id, secret, codeAt(secret, NOW), NOW))).toMatchObject(failed);
      expect(await storageDown('TransactWriteItemsCommand', () => factors.removeTotp(user.id, { step: totpStep(NOW) + 1 }))).toMatchObject(failed);
      expect(await storageDown('TransactWriteItemsCommand', () => factors.removeAllFactors(user.id))).toMatchObject(failed);
      expect((await read(user.id)).totp).toBeDefined();
      expect((await read(other.id)).totp).toBeUndefined();
    });

    it('tells a removal refused because the account is gone from one whose code was used', async () => {
      const { user, codes } = await enrolled();
      await doc.send(new DeleteCommand({ TableName: table, Key: userKey(user.id) }));

      expect(await factors.removeTotp(user.id, { step: totpStep(NOW) + 1 })).toEqual({ done: false, refusal: 'gone' });
      expect(await factors.removeTotp(user.id, { recoveryCodeHash: recoveryCodeHash(user.id, codes[0]!) })).toEqual({ done: false, refusal: 'gone' });
      expect(await item(totpKey(user.id))).toBeDefined();
      expect(await item(recoveryCodesKey(user.id))).toBeDefined();
    });

    it('reads no factors, and sends no request, for no user', async () => {
      const requests = countRequests(doc);
      try {
        expect(await batch.read([factors.factorsRead(undefined)] as const)).toEqual([{ recoveryCodeHashes: [] }]);
        expect(requests.operations).toEqual([]);
      } finally {
        requests.detach();
      }
    });

    it('reads an app no code was accepted for yet as before the first step', async () => {
      const userId = randomUUID();
      await doc.send(new PutCommand({ TableName: table, Item: { ...totpKey(userId), secret: 'SECRET', enrolledAt: '2026-01-02T03:04:05.678' } }));

      expect((await read(userId)).totp).toEqual({ secret: 'SECRET', lastStep: -1, enrolledAt: '2026-01-02T03:04:05.678' });
    });

    it('starts a pending sign-in with one PutItem, or with the login’s other writes in one transaction, all or nothing', async () => {
      const { user } = await enrolled();
      const known = knownBrowsers.newKnownBrowser(user.id, 3600, NOW);
      const requests = countRequests(doc);
      let alone: string;
      let together: string;
      try {
        alone = await factors.startPendingSignIn(user.id, new Date(NOW));
        expect(requests.operations).toEqual(['PutItemCommand']);
        together = await factors.startPendingSignIn(user.id, new Date(NOW), [known.item]);
        expect(requests.operations).toEqual(['PutItemCommand', 'TransactWriteItemsCommand']);
      } finally {
        requests.detach();
      }
      expect(await item(pendingSignInKey(hashSecret(alone)))).toMatchObject({ userId: user.id, expiresAt: NOW / 1000 + PENDING_SIGN_IN_SECONDS });
      expect(await item(pendingSignInKey(hashSecret(together)))).toMatchObject({ userId: user.id });
      expect(await item(knownBrowserKey(hashSecret(known.token)))).toMatchObject({ userId: user.id });

      // An item of the login's whose condition fails (here: the sign-in of an account that does not exist) fails the whole.
      const refused = createUserRepo({ doc, table }).signedInItem(randomUUID(), new Date(NOW));
      await expect(factors.startPendingSignIn(user.id, new Date(NOW), [refused])).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    });

    it('reads a pending sign-in until its 5 minutes are over, only for the user it names, and nothing for a cookie not of its shape', async () => {
      const { user } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(NOW));
      const pendingAt = async (value: string | undefined, at: number) => (await batch.read([factors.pendingSignInRead(value, new Date(at))] as const))[0];
      const forged = `${randomUUID()}.${token.split('.')[1]}`;
      await doc.send(new PutCommand({ TableName: table, Item: { ...pendingSignInKey(hashSecret(forged)), userId: user.id, expiresAt: NOW / 1000 + 300 } }));
      const requests = countRequests(doc);

      try {
        expect(await pendingAt(undefined, NOW)).toBeUndefined();
        expect(await pendingAt('not-a-cookie', NOW)).toBeUndefined();
        expect(await pendingAt(`bad!${token}`, NOW)).toBeUndefined();
        expect(requests.operations).toEqual([]);
      } finally {
        requests.detach();
      }
      expect(await pendingAt(token, NOW + PENDING_SIGN_IN_SECONDS * 1000 - 1000)).toBe(user.id);
      expect(await pendingAt(token, NOW + PENDING_SIGN_IN_SECONDS * 1000)).toBeUndefined();
      expect(await pendingAt(forged, NOW)).toBeUndefined();
    });
  });
});
