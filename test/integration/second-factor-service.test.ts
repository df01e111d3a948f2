import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, GetCommand, UpdateCommand } from '#shared/data/commands';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  checkFactorCode, completeSignIn, enrolAuthenticator, FACTOR_FAILURE_MESSAGES, openRecoveryCodes, removalRead, removeAuthenticator, resetFactorsByOperator,
} from '#shared/accounts/second-factor';
import { newTotpSecret, totpStep } from '#shared/accounts/totp';
import type { BatchReader } from '#shared/data/batch-read';
import { knownBrowserKey, pendingSignInKey, throttleKey, totpKey, userKey } from '#shared/data/item-keys';
import type { User } from '#shared/domain/user';
import { createOutboxMailer, readOutbox } from '#shared/email/outbox-mailer';
import { hashSecret } from '#shared/secrets';
import { countRequests } from '../support/count-requests';
import { putThrottleRecord } from '../support/throttle';
import { userNamed } from '../support/factories';
import { totpCodeAt as codeAt } from '../support/two-step';
import { useRepoTable } from '../support/repos';

const NOW = 1_800_000_010_000; // epoch ms, 10 s into a 30 s step
const FIREFOX = { browser: 'Firefox on Windows', address: '203.0.113.7' };

describe('the second-factor service on DynamoDB Local', () => {
  const { doc, table, repos: { factors, knownBrowsers, sessions, throttle, users, passkeys }, batch } = useRepoTable();

  const item = async (key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  const lastStep = async (userId: string) => (await item(totpKey(userId)))?.lastStep;

  /** A user with an authenticator app enrolled at `at`; its secret and recovery codes. */
  async function enrolled(at = NOW): Promise<{ user: User; secret: string; codes: string[] }> {
    const user = userNamed('Sam', 'Second');
    await users.createUser(user, 'scrypt$hash');
    const secret = newTotpSecret();
    await factors.startTotpEnrolment(user.id, secret, new Date(at));
    const result = await enrolAuthenticator(factors, user.id, secret, codeAt(secret, at), at);
    if (result.outcome !== 'enrolled') throw new Error(`not enrolled: ${result.outcome}`);
    const codes = openRecoveryCodes(result.revealKey, (await factors.takeRecoveryReveal(user.id, new Date(at)))!)!;
    return { user, secret, codes };
  }

  /**
   * The batch reader, with `meanwhile` run right after each read: what a concurrent request wrote
   * between this request's read and its writes.
   */
  const readThen = (meanwhile: () => Promise<unknown>): BatchReader => ({
    ...batch,
    async read(reads) {
      const answers = await batch.read(reads);
      await meanwhile();
      return answers;
    },
  });

  const signIn = (
    pendingSignIn: string | undefined, typed: string, now: number,
    options: { browserToken?: string; client?: typeof FIREFOX; reader?: BatchReader; complete?: typeof completeSignIn } = {},
  ) => (options.complete ?? completeSignIn)(
    { batch: options.reader ?? batch, factors, knownBrowsers, sessions, throttle, users },
    { pendingSignIn, typed, browserToken: options.browserToken, now, client: options.client },
  );

  describe('completing a sign-in', () => {
    const at = NOW + 30_000;

    it('answers a missing or malformed cookie without a request to the table', async () => {
      const requests = countRequests(doc);
      try {
        expect(await signIn(undefined, '123456', at)).toEqual({ outcome: 'expired' });
        expect(await signIn('not-a-cookie', '123456', at)).toEqual({ outcome: 'expired' });
        expect(requests.operations).toEqual([]);
      } finally {
        requests.detach();
      }
    });

    it('answers an attempt during a wait with the read alone: nothing reserved, nothing spent', async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      await putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 });
      const requests = countRequests(doc);

      const result = await signIn(token, codeAt(secret, at), at).finally(() => requests.detach());

      expect(result).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 16 });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await item(throttleKey('second-factor', user.id))).toMatchObject({ failures: 9, nextAttemptAt: at + 16_000 });
      expect(await lastStep(user.id)).toBe(totpStep(NOW));
      expect(await item(pendingSignInKey(hashSecret(token)))).toBeDefined();
    });

    it('does not check a code whose reservation a concurrent attempt took first, and says how long to wait', async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      const concurrentFailure = () => putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 });

      const result = await signIn(token, codeAt(secret, at), at, { reader: readThen(concurrentFailure) });

      expect(result).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 16 });
      expect(await lastStep(user.id)).toBe(totpStep(NOW));
      expect(await item(pendingSignInKey(hashSecret(token)))).toBeDefined();
      expect((await sessions.sessionKeysOf(user.id))).toEqual([]);
    });

    it('replaces the known browser it came from, and alerts the owner only for a browser new to the account', async () => {
      const { user, secret } = await enrolled();
      const step = (n: number) => at + n * 30_000;
      const pending = () => factors.startPendingSignIn(user.id, new Date(at));

      // The account's first sign-in is no news to its owner.
      const first = await signIn(await pending(), codeAt(secret, step(0)), step(0), { client: FIREFOX });
      // From the browser of that sign-in: known, so no alert, and its cookie replaced.
      const again = await signIn(await pending(), codeAt(secret, step(1)), step(1), { client: FIREFOX, browserToken: (first as { knownBrowserToken: string }).knownBrowserToken });
      // From a new browser: an alert, with the browser, address and time of the sign-in.
      const elsewhere = await signIn(await pending(), codeAt(secret, step(2)), step(2), { client: { browser: 'Safari on iPhone', address: '198.51.100.4' } });
      // From a browser known to another account: new to this one.
      const other = await enrolled();
      const theirs = await signIn(await factors.startPendingSignIn(other.user.id, new Date(at)), codeAt(other.secret, step(0)), step(0), { client: FIREFOX });
      const borrowed = await signIn(await pending(), codeAt(secret, step(3)), step(3), { client: FIREFOX, browserToken: (theirs as { knownBrowserToken: string }).knownBrowserToken });
      // Without the client's details (no page to describe it): no alert.
      const bare = await signIn(await pending(), codeAt(secret, step(4)), step(4));

      for (const result of [first, again, elsewhere, theirs, borrowed, bare]) expect(result.outcome).toBe('signed-in');
      expect(first).not.toHaveProperty('alert');
      expect(again).not.toHaveProperty('alert');
      const firstToken = (first as { knownBrowserToken: string }).knownBrowserToken;
      const againToken = (again as { knownBrowserToken: string }).knownBrowserToken;
      expect(await item(knownBrowserKey(hashSecret(firstToken)))).toBeUndefined();
      expect(await item(knownBrowserKey(hashSecret(againToken)))).toMatchObject({ userId: user.id, failures: 0 });
      expect(elsewhere).toMatchObject({
        alert: { to: user.email, firstname: 'Sam', browser: 'Safari on iPhone', address: '198.51.100.4', at: new Date(step(2)).toISOString().slice(0, 23) },
      });
      expect(borrowed).toMatchObject({ alert: { to: user.email, browser: FIREFOX.browser } });
      expect(bare).not.toHaveProperty('alert');
      expect((await item(userKey(user.id)))?.lastSignInAt).toBe(new Date(step(4)).toISOString().slice(0, 23));
    });

    it('calls a pending sign-in completed or expired meanwhile expired, and spends nothing', async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      const completedElsewhere = () => doc.send(new DeleteCommand({ TableName: table, Key: pendingSignInKey(hashSecret(token)) }));

      const result = await signIn(token, codeAt(secret, at), at, { reader: readThen(completedElsewhere) });

      expect(result).toEqual({ outcome: 'expired' });
      expect(await lastStep(user.id)).toBe(totpStep(NOW));
      expect(await sessions.sessionKeysOf(user.id)).toEqual([]);
    });

    it('calls a code spent by a concurrent sign-in used, and keeps the pending sign-in for another code', async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      const spentElsewhere = () => doc.send(new UpdateCommand({
        TableName: table, Key: totpKey(user.id), UpdateExpression: 'SET lastStep = :step', ExpressionAttributeValues: { ':step': totpStep(at) },
      }));

      const result = await signIn(token, codeAt(secret, at), at, { reader: readThen(spentElsewhere) });

      expect(result).toMatchObject({ outcome: 'failed', failure: 'used' });
      expect(await item(pendingSignInKey(hashSecret(token)))).toBeDefined();
      expect(await sessions.sessionKeysOf(user.id)).toEqual([]);
      expect((await signIn(token, codeAt(secret, at + 30_000), at + 30_000)).outcome).toBe('signed-in');
    });

    it('does not call a code used when the transaction failed for another reason (the account deleted meanwhile)', async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      const deletedElsewhere = () => doc.send(new DeleteCommand({ TableName: table, Key: userKey(user.id) }));

      await expect(signIn(token, codeAt(secret, at), at, { reader: readThen(deletedElsewhere) })).rejects.toMatchObject({ name: 'TransactionCanceledException' });

      expect(await lastStep(user.id)).toBe(totpStep(NOW));
      expect(await item(pendingSignInKey(hashSecret(token)))).toBeDefined();
    });

    it('takes the codes of the epoch’s first steps, and tells one used from a wrong one there too', async () => {
      const start = 15_000; // step 0
      const { user, secret } = await enrolled(start);
      const stored = (await batch.read([factors.factorsRead(user.id)] as const))[0];

      expect(stored.totp?.lastStep).toBe(0);
      expect(checkFactorCode(user.id, stored, codeAt(secret, start), start)).toEqual({ ok: false, failure: 'used' });
      expect(checkFactorCode(user.id, stored, codeAt(secret, start + 30_000), start + 30_000)).toEqual({ ok: true, spend: { step: 1 } });
    });

    it("counts failures and throttled attempts on the operators' dashboard (EMF metrics)", async () => {
      const { user, secret } = await enrolled();
      const token = await factors.startPendingSignIn(user.id, new Date(at));
      const spentElsewhere = () => doc.send(new UpdateCommand({
        TableName: table, Key: totpKey(user.id), UpdateExpression: 'SET lastStep = :step', ExpressionAttributeValues: { ':step': totpStep(at) },
      }));
      vi.resetModules();
      vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
      vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
      const out: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
      const outcomes: string[] = [];
      try {
        const { completeSignIn: counted } = await import('#shared/accounts/second-factor');
        const attempt = async (typed: string, options: { reader?: BatchReader } = {}) => {
          outcomes.push((await signIn(token, typed, at, { ...options, complete: counted })).outcome);
        };
        await attempt('x');
        await attempt(codeAt(secret, at), { reader: readThen(spentElsewhere) });
        await putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 });
        await attempt(codeAt(secret, at));
        await doc.send(new DeleteCommand({ TableName: table, Key: throttleKey('second-factor', user.id) }));
        await attempt(codeAt(secret, at), { reader: readThen(() => putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 })) });
      } finally {
        vi.restoreAllMocks();
        vi.unstubAllEnvs();
        vi.resetModules();
      }

      const metrics = out.filter((line) => line.includes('"_aws"')).map((line) => Object.keys(JSON.parse(line)).find((name) => /^[A-Z]/.test(name)));
      expect(outcomes).toEqual(['failed', 'failed', 'throttled', 'throttled']);
      expect(metrics).toEqual(['LoginFailures', 'LoginFailures', 'LoginThrottled', 'LoginThrottled']);
    });
  });

  describe('turning the authenticator app off', () => {
    const at = NOW + 30_000;
    const remove = (userId: string, typed: string, reader = batch) => removeAuthenticator({ batch: reader, factors, throttle }, userId, typed, at);

    it('answers during a wait with the read alone, and the factors for the page', async () => {
      const { user, secret } = await enrolled();
      await putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 });
      const requests = countRequests(doc);

      const result = await remove(user.id, codeAt(secret, at)).finally(() => requests.detach());

      expect(result).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 16, stored: { totp: { secret, lastStep: totpStep(NOW) } } });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await item(totpKey(user.id))).toBeDefined();
    });

    it('takes the factors and the throttle record read with the page\'s session (removalRead), reading nothing more', async () => {
      const { user, secret } = await enrolled();
      const [read] = await batch.read([removalRead({ factors, throttle }, user.id, at)] as const);
      expect(read[0].totp?.secret).toBe(secret);
      expect(read[1]).toMatchObject({ scope: 'second-factor', subject: user.id, failures: 0 });
      const requests = countRequests(doc);

      const result = await removeAuthenticator({ batch, factors, throttle }, user.id, codeAt(secret, at), at, read).finally(() => requests.detach());

      expect(result).toEqual({ outcome: 'removed' });
      expect(requests.operations).toEqual(['UpdateItemCommand', 'TransactWriteItemsCommand']);
      expect(await item(totpKey(user.id))).toBeUndefined();
    });

    it('does not check a code whose reservation a concurrent attempt took first', async () => {
      const { user, secret } = await enrolled();
      const concurrentFailure = () => putThrottleRecord({ doc, table }, 'second-factor', user.id, { failures: 9, nextAttemptAt: at + 16_000 });

      const result = await remove(user.id, codeAt(secret, at), readThen(concurrentFailure));

      expect(result).toMatchObject({ outcome: 'throttled', retryAfterSeconds: 16, stored: { totp: { secret } } });
      expect(await lastStep(user.id)).toBe(totpStep(NOW));
    });

    it('calls a code spent meanwhile used, and keeps the factor', async () => {
      const { user, secret } = await enrolled();
      const spentElsewhere = () => doc.send(new UpdateCommand({
        TableName: table, Key: totpKey(user.id), UpdateExpression: 'SET lastStep = :step', ExpressionAttributeValues: { ':step': totpStep(at) },
      }));

      const result = await remove(user.id, codeAt(secret, at), readThen(spentElsewhere));

      expect(result).toMatchObject({ outcome: 'failed', failure: 'used', stored: { totp: { secret, lastStep: totpStep(NOW) } } });
      expect(await item(totpKey(user.id))).toMatchObject({ secret, lastStep: totpStep(at) });
      expect((await item(userKey(user.id)))?.totpEnabled).toBe(true);
    });
  });

  describe('enrolling', () => {
    it('takes a first code of the epoch’s first step', async () => {
      const user = userNamed('Sam', 'Second');
      await users.createUser(user, 'scrypt$hash');
      const secret = newTotpSecret();
      await factors.startTotpEnrolment(user.id, secret, new Date(15_000));

      expect((await enrolAuthenticator(factors, user.id, secret, codeAt(secret, 15_000), 15_000)).outcome).toBe('enrolled');
      expect(await item(totpKey(user.id))).toMatchObject({ secret, lastStep: 0 });
    });
  });

  describe('what the page says', () => {
    it('has a message of its own for each refusal; the malformed one shows both kinds of code', () => {
      const messages = Object.values(FACTOR_FAILURE_MESSAGES);
      expect(new Set(messages).size).toBe(3);
      for (const message of messages) expect(message.length).toBeGreaterThan(20);
      expect(FACTOR_FAILURE_MESSAGES.malformed).toMatch(/6-digit code .* recovery code like abcd-efgh-jkmn-pqrs/);
    });
  });

  describe("the operator's reset", () => {
    let outbox: string;
    beforeAll(() => {
      outbox = mkdtempSync(join(tmpdir(), 'reset-outbox-'));
    });
    afterAll(() => rmSync(outbox, { recursive: true, force: true }));
    const reset = (email: string) => resetFactorsByOperator(
      { users, factors, passkeys, sessions, mailer: createOutboxMailer(outbox), issuer: 'https://auth.example.com' }, email,
    );

    it('removes every factor and passkey, ends every session, and tells the owner by e-mail', async () => {
      const { user } = await enrolled();
      expect(await passkeys.addPasskey(user.id, {
        credentialId: 'Y3JlZA', publicKey: 'cGs', counter: 0, transports: [], name: 'Phone', createdAt: '2026-11-27T10:00:00.000', backedUp: false,
      })).toBe('added');
      await sessions.createSession(user.id);
      await sessions.createSession(user.id);

      const result = await reset(user.email);

      expect(result).toEqual({ userId: user.id, sessionsEnded: 2, passkeysRemoved: 1 });
      expect(await item(totpKey(user.id))).toBeUndefined();
      expect(await passkeys.passkeysOf(user.id)).toEqual([]);
      expect(await sessions.sessionKeysOf(user.id)).toEqual([]);
      expect(await item(userKey(user.id))).toMatchObject({ totpEnabled: false, passkeyCount: 0 });
      const mail = (await readOutbox(outbox)).filter((m) => m.to === user.email);
      expect(mail).toHaveLength(1);
      expect(mail[0]).toMatchObject({ subject: 'Two-step sign-in was turned off' });
      expect(mail[0]!.text).toMatch(/^Hello Sam,\n\nAt a request made to our support, two-step sign-in was turned off for your account/);
      expect(mail[0]!.text).toContain('Your password alone signs you in now.');
      expect(mail[0]!.text).toContain('set up two-step sign-in again: https://auth.example.com/account/security\n');
      expect(mail[0]!.text).toContain('choose a new password now at https://auth.example.com/password-reset and tell our support.');
    });

    it('answers nothing for an address without an account, and mails no one', async () => {
      const before = (await readOutbox(outbox)).length;
      expect(await reset(`nobody-${randomUUID()}@example.com`)).toBeUndefined();
      expect(await readOutbox(outbox)).toHaveLength(before);
    });
  });
});
