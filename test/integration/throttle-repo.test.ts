import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { FREE_ATTEMPTS, nextAttemptAfterReserving } from '#shared/accounts/login-throttle';
import { hashSecret, randomToken } from '#shared/secrets';
import { knownBrowserKey, throttleKey } from '#shared/data/item-keys';
import {
  createThrottleRepo, THROTTLE_MEMORY_SECONDS, type Reservation, type ThrottleRecord, type ThrottleScope,
} from '#shared/data/throttle-repo';
import { createKnownBrowserRepo } from '#shared/data/known-browser-repo';
import { useRepoTable } from '../support/repos';

// Login throttle records and known browsers through their repositories on DynamoDB Local: what a guesser
// (or the account's owner) gets from each write. Time is a parameter (epoch milliseconds): nothing waits.

const T = Date.UTC(2026, 10, 23, 10, 0, 0, 0);
const SECOND = 1000;

describe('throttle repository', () => {
  const { doc, table, repos: { throttle, knownBrowsers }, batch } = useRepoTable();

  const subjects = () => ({ account: `guess-${randomUUID()}@example.com`, address: `198.51.100.${Math.floor(Math.random() * 250)}-${randomUUID()}` });
  const reservationsOf = (records: readonly ThrottleRecord[], now: number): Reservation[] =>
    records.map((record) => ({ record, freeAttempts: FREE_ATTEMPTS[record.scope], nextAttemptAt: nextAttemptAfterReserving(record, now) }));
  /** One login attempt as post-login makes it: read the records, reserve one failure on each. */
  async function attempt(account: string, address: string, now: number) {
    return throttle.reserve(reservationsOf(await throttle.getRecords(account, address, now), now), now);
  }
  const rawItem = async (scope: ThrottleScope, subject: string) =>
    (await doc.send(new GetCommand({ TableName: table, Key: throttleKey(scope, subject), ConsistentRead: true }))).Item;
  const failuresOf = (records: readonly ThrottleRecord[]) => records.map((record) => record.failures);

  it('reads an account never tried as three records with no failures, about the pair, the account and the address', async () => {
    const { account, address } = subjects();

    expect(await throttle.getRecords(account, address, T)).toEqual([
      { scope: 'account-address', subject: `${account} ${address}`, failures: 0, nextAttemptAt: 0, stored: 'none' },
      { scope: 'account', subject: account, failures: 0, nextAttemptAt: 0, stored: 'none' },
      { scope: 'address', subject: address, failures: 0, nextAttemptAt: 0, stored: 'none' },
    ]);
  });

  it('counts each attempt on all three records, remembered for a day after the last one', async () => {
    const { account, address } = subjects();

    expect(await attempt(account, address, T)).toEqual({ reserved: true });
    expect(await attempt(account, address, T + SECOND)).toEqual({ reserved: true });

    const records = await throttle.getRecords(account, address, T + 2 * SECOND);
    expect(records.map(({ failures, nextAttemptAt, stored }) => ({ failures, nextAttemptAt, stored }))).toEqual([
      { failures: 2, nextAttemptAt: T + 2 * SECOND, stored: 'live' },
      { failures: 2, nextAttemptAt: T + 2 * SECOND, stored: 'live' },
      { failures: 2, nextAttemptAt: T + 2 * SECOND, stored: 'live' },
    ]);
    expect((await rawItem('account', account))?.expiresAt).toBe(Math.floor((T + SECOND) / SECOND) + THROTTLE_MEMORY_SECONDS);
    expect(THROTTLE_MEMORY_SECONDS).toBe(86_400);
    // A day after the last attempt the records count as absent, even before DynamoDB deletes them.
    const forgotten = await throttle.getRecords(account, address, T + SECOND + THROTTLE_MEMORY_SECONDS * SECOND);
    expect(forgotten.map(({ failures, nextAttemptAt, stored }) => ({ failures, nextAttemptAt, stored }))).toEqual(
      Array.from({ length: 3 }, () => ({ failures: 0, nextAttemptAt: 0, stored: 'expired' })));
    expect(failuresOf(await throttle.getRecords(account, address, T + THROTTLE_MEMORY_SECONDS * SECOND))).toEqual([2, 2, 2]);
  });

  it('lets concurrent attempts read with stale counts take the free attempts, and no more', async () => {
    const { account, address } = subjects();
    const stale = await throttle.getRecords(account, address, T);

    // Five attempts that all read "no failures": the first three go ahead, the last two find the free attempts used up.
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await throttle.reserve(reservationsOf(stale, T), T));

    expect(outcomes.map((outcome) => outcome.reserved)).toEqual([true, true, true, false, false]);
    expect(failuresOf(await throttle.getRecords(account, address, T))).toEqual([3, 3, 3]);
  });

  it('refuses an attempt beyond the free failures while the wait lasts, and writes nothing', async () => {
    const { account, address } = subjects();
    for (let i = 0; i < 3; i++) expect(await attempt(account, address, T)).toEqual({ reserved: true });
    const before = await throttle.getRecords(account, address, T);
    expect(before[0]).toMatchObject({ failures: 3, nextAttemptAt: T + SECOND });

    const refused = await throttle.reserve(reservationsOf(before, T + SECOND - 1), T + SECOND - 1);

    expect(refused.reserved).toBe(false);
    expect(await throttle.getRecords(account, address, T + SECOND - 1)).toEqual(before);
    // The wait over, the fourth attempt goes ahead and doubles the next one.
    expect(await throttle.reserve(reservationsOf(before, T + SECOND), T + SECOND)).toEqual({ reserved: true });
    const after = await throttle.getRecords(account, address, T + SECOND);
    expect(after[0]).toMatchObject({ failures: 4, nextAttemptAt: T + 3 * SECOND });
  });

  it('refuses an attempt that read a count another attempt has since raised, and says how long to wait', async () => {
    const { account, address } = subjects();
    for (let i = 0; i < 3; i++) await attempt(account, address, T);
    const read = await throttle.getRecords(account, address, T + SECOND);
    expect(await throttle.reserve(reservationsOf(read, T + SECOND), T + SECOND)).toEqual({ reserved: true });

    // A concurrent attempt that read 3 failures after the wait ended: its count is no longer the stored one.
    const outcome = await throttle.reserve(reservationsOf(read, T + 5 * SECOND), T + 5 * SECOND);

    expect(outcome).toEqual({
      reserved: false,
      current: [
        { scope: 'account-address', subject: `${account} ${address}`, failures: 4, nextAttemptAt: T + 3 * SECOND, stored: 'live' },
        // Below their free attempts the others would have allowed it: they are reported as read.
        read[1],
        read[2],
      ],
    });
    expect(failuresOf(await throttle.getRecords(account, address, T + 5 * SECOND))).toEqual([4, 4, 4]);
  });

  describe('a single record (a second factor\'s, a passkey sign-in\'s address)', () => {
    const secondFactorRecord = async (userId: string, now: number) => (await batch.read([throttle.secondFactorRecordRead(userId, now)] as const))[0];
    const reserveSecondFactor = async (record: ThrottleRecord, now: number) => throttle.reserve(reservationsOf([record], now), now);

    it('lets 20 parallel attempts that read the same count take the free attempts, and no more', async () => {
      const userId = randomUUID();
      const stale = await secondFactorRecord(userId, T);

      const outcomes = await Promise.all(Array.from({ length: 20 }, () => reserveSecondFactor(stale, T)));

      expect(outcomes.filter((outcome) => outcome.reserved)).toHaveLength(FREE_ATTEMPTS['second-factor']);
      expect((await secondFactorRecord(userId, T)).failures).toBe(FREE_ATTEMPTS['second-factor']);
    });
  });

  it('refuses all three reservations when one record refuses: an address over its limit counts nothing against a fresh account', async () => {
    const { address } = subjects();
    for (let i = 0; i < FREE_ATTEMPTS.address; i++) {
      expect(await attempt(`victim-${i}-${randomUUID()}@example.com`, address, T)).toEqual({ reserved: true });
    }
    const account = `fresh-${randomUUID()}@example.com`;
    const read = await throttle.getRecords(account, address, T);
    expect(failuresOf(read)).toEqual([0, 0, FREE_ATTEMPTS.address]);

    const outcome = await throttle.reserve(reservationsOf(read, T), T);

    expect(outcome.reserved).toBe(false);
    expect(outcome.reserved === false && outcome.current.map((record) => record.failures)).toEqual([0, 0, FREE_ATTEMPTS.address]);
    expect(await rawItem('account-address', `${account} ${address}`)).toBeUndefined();
    expect(await rawItem('account', account)).toBeUndefined();
  });

  it('starts a record past its day again at one failure, once: a second attempt that read it expired is refused', async () => {
    const { account, address } = subjects();
    for (let i = 0; i < 3; i++) await attempt(account, address, T);
    const later = T + 2 * THROTTLE_MEMORY_SECONDS * SECOND;
    const expired = await throttle.getRecords(account, address, later);
    expect(expired.map((record) => record.stored)).toEqual(['expired', 'expired', 'expired']);

    expect(await throttle.reserve(reservationsOf(expired, later), later)).toEqual({ reserved: true });
    const restarted = await throttle.getRecords(account, address, later);
    expect(restarted.map(({ failures, stored, nextAttemptAt }) => ({ failures, stored, nextAttemptAt }))).toEqual(
      Array.from({ length: 3 }, () => ({ failures: 1, stored: 'live', nextAttemptAt: later + SECOND })));
    expect((await rawItem('account-address', `${account} ${address}`))?.expiresAt).toBe(Math.floor(later / SECOND) + THROTTLE_MEMORY_SECONDS);

    const second = await throttle.reserve(reservationsOf(expired, later), later);
    expect(second.reserved).toBe(false);
    expect(failuresOf(await throttle.getRecords(account, address, later))).toEqual([1, 1, 1]);
  });

  it("gives a successful login's reservation back: the pair forgotten, the account and the address one failure less and no wait", async () => {
    const { account, address } = subjects();
    for (let i = 0; i < 3; i++) await attempt(account, address, T);
    await attempt(account, address, T + SECOND);

    await doc.send(new TransactWriteCommand({ TransactItems: throttle.creditItems(account, address, T + 2 * SECOND) }));

    const records = await throttle.getRecords(account, address, T + 2 * SECOND);
    expect(records.map(({ failures, nextAttemptAt, stored }) => ({ failures, nextAttemptAt, stored }))).toEqual([
      { failures: 0, nextAttemptAt: 0, stored: 'none' },
      { failures: 3, nextAttemptAt: T + 2 * SECOND, stored: 'live' },
      { failures: 3, nextAttemptAt: T + 2 * SECOND, stored: 'live' },
    ]);
    // The day of memory still runs from the last failure.
    expect((await rawItem('account', account))?.expiresAt).toBe(Math.floor((T + SECOND) / SECOND) + THROTTLE_MEMORY_SECONDS);
  });

  it('gives a password asked again its reservation back as a login does (credit: one transaction)', async () => {
    const { account, address } = subjects();
    await attempt(account, address, T);
    await attempt(account, address, T + SECOND);

    await throttle.credit(account, address, T + 2 * SECOND);

    expect(failuresOf(await throttle.getRecords(account, address, T + 2 * SECOND))).toEqual([0, 1, 1]);
    expect((await throttle.getRecords(account, address, T + 2 * SECOND))[1]).toMatchObject({ nextAttemptAt: T + 2 * SECOND, stored: 'live' });
  });

  it('counts a passkey sign-in on its address\'s record alone, and gives a successful one back', async () => {
    const { account, address } = subjects();
    const addressRecord = async (now: number) => (await batch.read([throttle.addressRecordRead(address, now)] as const))[0];
    expect(await addressRecord(T)).toEqual({ scope: 'address', subject: address, failures: 0, nextAttemptAt: 0, stored: 'none' });

    expect(await throttle.reserve(reservationsOf([await addressRecord(T)], T), T)).toEqual({ reserved: true });
    expect(await throttle.reserve(reservationsOf([await addressRecord(T)], T), T)).toEqual({ reserved: true });
    // The address's record is the password's record of that address: the two share their count.
    expect(failuresOf(await throttle.getRecords(account, address, T))).toEqual([0, 0, 2]);
    await doc.send(new TransactWriteCommand({ TransactItems: [throttle.addressCreditItem(address, T + SECOND)] }));

    expect(await addressRecord(T + SECOND)).toEqual({ scope: 'address', subject: address, failures: 1, nextAttemptAt: T + SECOND, stored: 'live' });
  });

  describe('when DynamoDB cancels the reservation', () => {
    /** Runs `act` with the reservation's transaction cancelled for `reasons` the first `times` times (as DynamoDB answers a collision). */
    async function cancelled<T>(reasons: { Code: string; Item?: Record<string, unknown> }[] | undefined, times: number, act: () => Promise<T>): Promise<{ result: T; sent: number }> {
      const name = `cancel-${randomUUID()}`;
      let sent = 0;
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
        sent++;
        if (sent <= times) throw Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: reasons });
        return next(args);
      }, { step: 'initialize', name });
      try {
        return { result: await act(), sent };
      } finally {
        doc.middlewareStack.remove(name);
      }
    }
    const conflictOnAccount = [{ Code: 'None' }, { Code: 'TransactionConflict' }, { Code: 'None' }];

    it('sends a reservation that only collided with a concurrent one again, once', async () => {
      const { account, address } = subjects();
      const read = await throttle.getRecords(account, address, T);

      const once = await cancelled(conflictOnAccount, 1, () => throttle.reserve(reservationsOf(read, T), T));
      expect(once).toEqual({ result: { reserved: true }, sent: 2 });
      expect(failuresOf(await throttle.getRecords(account, address, T))).toEqual([1, 1, 1]);

      const twice = await cancelled(conflictOnAccount, 2, () => throttle.reserve(reservationsOf(read, T), T));
      expect(twice).toEqual({ result: { reserved: false, current: read }, sent: 2 });
      expect(failuresOf(await throttle.getRecords(account, address, T))).toEqual([1, 1, 1]);
    });

    it('refuses at once, without sending it again, a reservation refused by one record while colliding on another', async () => {
      const { account, address } = subjects();
      const read = await throttle.getRecords(account, address, T);
      const pair = { failures: { N: '7' }, nextAttemptAt: { N: String(T + 60 * SECOND) }, expiresAt: { N: String(Math.floor(T / SECOND) + 60) } };

      const outcome = await cancelled([{ Code: 'ConditionalCheckFailed', Item: pair }, { Code: 'TransactionConflict' }, { Code: 'None' }], 1,
        () => throttle.reserve(reservationsOf(read, T), T));

      expect(outcome).toEqual({
        result: { reserved: false, current: [{ ...read[0], failures: 7, nextAttemptAt: T + 60 * SECOND, stored: 'live' }, read[1], read[2]] },
        sent: 1,
      });
      expect(failuresOf(await throttle.getRecords(account, address, T))).toEqual([0, 0, 0]);
    });

    it('refuses at once a reservation cancelled for a reason that is neither its condition nor a collision', async () => {
      const { account, address } = subjects();
      const read = await throttle.getRecords(account, address, T);

      const outcome = await cancelled([{ Code: 'None' }, { Code: 'ThrottlingError' }, { Code: 'None' }], 1, () => throttle.reserve(reservationsOf(read, T), T));

      expect(outcome).toEqual({ result: { reserved: false, current: read }, sent: 1 });
    });

    it('refuses a reservation cancelled without reasons, reporting the records as read', async () => {
      const { account, address } = subjects();
      const read = await throttle.getRecords(account, address, T);

      expect(await cancelled(undefined, 1, () => throttle.reserve(reservationsOf(read, T), T))).toEqual({ result: { reserved: false, current: read }, sent: 1 });
    });
  });

  it('gives back a reservation whose records are gone meanwhile, and forgets that within the day', async () => {
    const { account, address } = subjects();

    await doc.send(new TransactWriteCommand({ TransactItems: throttle.creditItems(account, address, T) }));

    expect((await rawItem('account', account))?.expiresAt).toBe(Math.floor(T / SECOND) + THROTTLE_MEMORY_SECONDS);
    expect((await rawItem('address', address))?.expiresAt).toBe(Math.floor(T / SECOND) + THROTTLE_MEMORY_SECONDS);
    expect(await throttle.getRecords(account, address, T + THROTTLE_MEMORY_SECONDS * SECOND)).toMatchObject([{ stored: 'none' }, { stored: 'expired' }, { stored: 'expired' }]);
  });

  it('passes a storage failure on rather than answering that the attempt is throttled', async () => {
    const { account, address } = subjects();
    const elsewhere = createThrottleRepo({ doc, table: `missing-${randomUUID()}` });
    const records = await throttle.getRecords(account, address, T);

    await expect(elsewhere.reserve(reservationsOf(records, T), T)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(createKnownBrowserRepo({ doc, table: `missing-${randomUUID()}` }).reserveKnownBrowser(randomToken(), 'user', 5, T)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  describe('one record (a second factor’s, a passkey sign-in’s address)', () => {
    const secondFactor = async (userId: string, now: number) => (await batch.read([throttle.secondFactorRecordRead(userId, now)]))[0];
    /** The operations `act` sends, and its result. */
    async function sent<R>(act: () => Promise<R>): Promise<{ result: R; operations: string[] }> {
      const name = `sent-${randomUUID()}`;
      const operations: string[] = [];
      doc.middlewareStack.add((next, context) => async (args) => {
        operations.push(String(context.commandName));
        return next(args);
      }, { step: 'initialize', name });
      try {
        return { result: await act(), operations };
      } finally {
        doc.middlewareStack.remove(name);
      }
    }

    it('reserves with one conditional UpdateItem (half the write units of a one-item transaction), the free failures and no more', async () => {
      const userId = randomUUID();
      const reserveNow = async () => throttle.reserve(reservationsOf([await secondFactor(userId, T)], T), T);
      const read = await secondFactor(userId, T);

      const first = await sent(() => throttle.reserve(reservationsOf([read], T), T));
      const outcomes = [first.result];
      for (let i = 1; i < FREE_ATTEMPTS['second-factor'] + 1; i++) outcomes.push(await reserveNow());

      expect(first.operations).toEqual(['UpdateItemCommand']);
      expect(outcomes.map((outcome) => outcome.reserved)).toEqual([...Array.from({ length: FREE_ATTEMPTS['second-factor'] }, () => true), false]);
      expect(await secondFactor(userId, T)).toMatchObject({ failures: FREE_ATTEMPTS['second-factor'], nextAttemptAt: T + SECOND, stored: 'live' });
    });

    it('refuses a reservation that read a count since raised, with the record as it now is, writing nothing', async () => {
      const userId = randomUUID();
      for (let i = 0; i < FREE_ATTEMPTS['second-factor']; i++) await throttle.reserve(reservationsOf([await secondFactor(userId, T)], T), T);
      const read = await secondFactor(userId, T + SECOND);
      expect(await throttle.reserve(reservationsOf([read], T + SECOND), T + SECOND)).toEqual({ reserved: true });

      const outcome = await throttle.reserve(reservationsOf([read], T + 5 * SECOND), T + 5 * SECOND);

      expect(outcome).toEqual({
        reserved: false,
        current: [{ scope: 'second-factor', subject: userId, failures: FREE_ATTEMPTS['second-factor'] + 1, nextAttemptAt: T + 3 * SECOND, stored: 'live' }],
      });
      expect((await secondFactor(userId, T + 5 * SECOND)).failures).toBe(FREE_ATTEMPTS['second-factor'] + 1);
    });

    it('sends a reservation that collided with a concurrent transaction on its record again, once', async () => {
      const userId = randomUUID();
      const read = await secondFactor(userId, T);
      const conflicted = async (times: number) => {
        const name = `conflict-${randomUUID()}`;
        let count = 0;
        doc.middlewareStack.add((next, context) => async (args) => {
          if (context.commandName !== 'UpdateItemCommand') return next(args);
          count++;
          if (count <= times) throw Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });
          return next(args);
        }, { step: 'initialize', name });
        try {
          return { result: await throttle.reserve(reservationsOf([read], T), T), count };
        } finally {
          doc.middlewareStack.remove(name);
        }
      };

      expect(await conflicted(1)).toEqual({ result: { reserved: true }, count: 2 });
      expect(await conflicted(2)).toEqual({ result: { reserved: false, current: [read] }, count: 2 });
      expect((await secondFactor(userId, T)).failures).toBe(1);
    });
  });

  describe('known browsers', () => {
    const knownBrowser = async (token: string | undefined, now: number) => (await batch.read([knownBrowsers.knownBrowserRead(token, now)]))[0];
    async function signedInBrowser(userId: string, ttlSeconds = 30 * 86_400, now = T): Promise<string> {
      const { token, item } = knownBrowsers.newKnownBrowser(userId, ttlSeconds, now);
      await doc.send(new TransactWriteCommand({ TransactItems: [item] }));
      return token;
    }

    it('knows a browser that signed in, until its cookie expires, storing only the hash of the cookie', async () => {
      const userId = randomUUID();
      const token = await signedInBrowser(userId, 3600);

      expect(await knownBrowser(token, T + 3600 * SECOND - 1)).toEqual({ userId, failures: 0 });
      expect(await knownBrowser(token, T + 3600 * SECOND)).toBeUndefined();
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: knownBrowserKey(hashSecret(token)) }));
      expect(Item).toMatchObject({ userId, failures: 0, expiresAt: Math.floor(T / SECOND) + 3600 });
      expect(JSON.stringify(Item)).not.toContain(token);
    });

    it('reads nothing, without asking the table, for an absent cookie or one not of our shape', async () => {
      const userId = randomUUID();
      const token = await signedInBrowser(userId);

      for (const value of [undefined, '', token.slice(1), `${token}A`, `${token}=`, ` ${token}`, `${token.slice(0, 42)}+`, `${token}\n`]) {
        expect(knownBrowsers.knownBrowserRead(value, T).keys).toEqual([]);
        expect(await knownBrowser(value, T)).toBeUndefined();
      }
      expect(await knownBrowser(randomToken(), T)).toBeUndefined();
    });

    it('lets a known browser reserve up to its limit of failures, for its own account only, and writes nothing when it refuses', async () => {
      const userId = randomUUID();
      const token = await signedInBrowser(userId, 3600);

      expect(await knownBrowsers.reserveKnownBrowser(token, randomUUID(), 2, T)).toBe(false);
      expect(await knownBrowsers.reserveKnownBrowser(token, userId, 2, T)).toBe(true);
      expect(await knownBrowsers.reserveKnownBrowser(token, userId, 2, T)).toBe(true);
      expect(await knownBrowsers.reserveKnownBrowser(token, userId, 2, T)).toBe(false);
      expect(await knownBrowser(token, T)).toEqual({ userId, failures: 2 });

      const other = await signedInBrowser(userId, 3600);
      expect(await knownBrowsers.reserveKnownBrowser(other, userId, 2, T + 3600 * SECOND)).toBe(false);
      expect(await knownBrowsers.reserveKnownBrowser(randomToken(), userId, 2, T)).toBe(false);
      expect(await knownBrowser(other, T)).toEqual({ userId, failures: 0 });
    });

    it('forgets a known browser whose cookie a login replaced', async () => {
      const userId = randomUUID();
      const token = await signedInBrowser(userId);

      await doc.send(new TransactWriteCommand({ TransactItems: [knownBrowsers.forgetKnownBrowserItem(token)] }));

      expect(await knownBrowser(token, T)).toBeUndefined();
      expect(await knownBrowsers.reserveKnownBrowser(token, userId, 5, T)).toBe(false);
    });

    it('reads a known browser stored without a failure count as having none', async () => {
      const userId = randomUUID();
      const token = randomToken();
      await doc.send(new PutCommand({ TableName: table, Item: { ...knownBrowserKey(hashSecret(token)), userId, expiresAt: Math.floor(T / SECOND) + 60 } }));

      expect(await knownBrowser(token, T)).toEqual({ userId, failures: 0 });
    });
  });
});
