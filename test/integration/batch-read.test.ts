import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, PutCommand } from '#shared/data/commands';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret } from '#shared/secrets';
import type { ItemKey } from '#shared/data/batch-read';
import { createClientRepo } from '#shared/data/client-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { sessionKey, sessionsOfUserIndexKey } from '#shared/data/item-keys';
import { createSessionRepo, SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { epochSeconds } from '#shared/domain/time';
import { makeClient, userNamed } from '../support/factories';
import { putThrottleRecord } from '../support/throttle';
import { useRepoTable } from '../support/repos';

const PASSWORD_HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';

describe('batch reader', () => {
  const { doc, table, batch, requests } = useRepoTable();
  /** The input of every BatchGetItem sent, as the document client saw it. */
  const batchInputs: { RequestItems: Record<string, { Keys: ItemKey[]; ConsistentRead?: boolean }> }[] = [];

  beforeAll(async () => {
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchGetItemCommand') batchInputs.push(structuredClone(args.input) as (typeof batchInputs)[number]);
        return next(args);
      },
      { step: 'initialize', name: 'record-batch-inputs' },
    );
  });
  beforeEach(() => {
    batchInputs.length = 0;
  });

  /** Writes `count` plain items under a prefix of their own (BatchWriteItem, 25 at a time); returns their keys. */
  async function putItems(count: number): Promise<ItemKey[]> {
    const prefix = `ITEM#${randomUUID()}`;
    const keys = Array.from({ length: count }, (_, n) => ({ pk: `${prefix}#${n}`, sk: 'ITEM' }));
    for (let start = 0; start < keys.length; start += 25) {
      await doc.send(new BatchWriteCommand({
        RequestItems: { [table]: keys.slice(start, start + 25).map((key, i) => ({ PutRequest: { Item: { ...key, n: start + i } } })) },
      }));
    }
    requests.reset();
    batchInputs.length = 0;
    return keys;
  }

  const missingKey = (): ItemKey => ({ pk: `ITEM#missing-${randomUUID()}`, sk: 'ITEM' });

  describe('getItems', () => {
    it('answers aligned with the keys, undefined where no item exists, in one strongly consistent BatchGetItem', async () => {
      // Prepare
      const [first, second, third] = await putItems(3);
      const absent = missingKey();

      // Act
      const items = await batch.getItems([third!, absent, first!, second!]);

      // Assess
      expect(items).toEqual([{ ...third, n: 2 }, undefined, { ...first, n: 0 }, { ...second, n: 1 }]);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(batchInputs).toHaveLength(1);
      expect(batchInputs[0]!.RequestItems[table]!.ConsistentRead).toBe(true);
      expect(batchInputs[0]!.RequestItems[table]!.Keys).toEqual([third, absent, first, second]);
    });

    it('reads a key given twice once, and answers it in both places', async () => {
      // Prepare
      const [first, second] = await putItems(2);

      // Act
      const items = await batch.getItems([first!, second!, { ...first! }, first!]);

      // Assess
      expect(items).toEqual([{ ...first, n: 0 }, { ...second, n: 1 }, { ...first, n: 0 }, { ...first, n: 0 }]);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(batchInputs[0]!.RequestItems[table]!.Keys).toEqual([first, second]);
    });

    it('reads 150 keys with two BatchGetItems (100 + 50) and finds every item in its place', async () => {
      // Prepare
      const keys = await putItems(150);

      // Act
      const items = await batch.getItems(keys);

      // Assess
      expect(items).toEqual(keys.map((key, n) => ({ ...key, n })));
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
      expect(batchInputs.map((input) => input.RequestItems[table]!.Keys.length)).toEqual([100, 50]);
    });

    it('counts distinct keys for the 100-key limit: 100 distinct keys among 150 take one request', async () => {
      // Prepare
      const keys = await putItems(100);
      const withRepeats = [...keys, ...keys.slice(0, 50)];

      // Act
      const items = await batch.getItems(withRepeats);

      // Assess
      expect(items).toEqual(withRepeats.map((key) => ({ ...key, n: keys.indexOf(key) })));
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('keeps absent keys undefined in their places across several requests', async () => {
      // Prepare: 120 items with an absent key after every tenth
      const found = await putItems(120);
      const keys = found.flatMap((key, n) => (n % 10 === 9 ? [key, missingKey()] : [key]));

      // Act
      const items = await batch.getItems(keys);

      // Assess
      expect(keys).toHaveLength(132);
      expect(items).toEqual(keys.map((key) => (key.pk.startsWith('ITEM#missing-') ? undefined : { ...key, n: found.indexOf(key) })));
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    });

    it('sends no request for no keys', async () => {
      // Act
      const items = await batch.getItems([]);

      // Assess
      expect(items).toEqual([]);
      expect(requests.total).toBe(0);
    });
  });

  describe('read', () => {
    it("answers several repositories' reads with one BatchGetItem", async () => {
      // Prepare: a user with a session, an application with her consent, a failed login on her account
      const deps = { doc, table };
      const users = createUserRepo(deps);
      const clients = createClientRepo(deps);
      const grants = createGrantRepo(deps);
      const sessions = createSessionRepo(deps);
      const throttle = createThrottleRepo(deps);
      const user = userNamed('Dora', 'Batch');
      await users.createUser(user, PASSWORD_HASH);
      const app = makeClient({ developerId: user.id });
      await clients.createClient(app);
      const consent = { userId: user.id, clientId: app.clientId, scopes: ['read_user'], grantedAt: '2026-02-03T04:05:06.789' };
      await grants.saveConsent(consent);
      const sessionId = await sessions.createSession(user.id);
      await putThrottleRecord(deps, 'account', user.email, { failures: 1, nextAttemptAt: 1_700_000_001_000, expiresAt: 1_700_086_400 });
      const unknownClient = randomUUID();
      requests.reset();
      batchInputs.length = 0;

      // Act
      const [signedIn, apps, remembered, failures, userId, unknownEmail] = await batch.read([
        sessions.signedInRead(sessionId),
        clients.clientsRead([app.clientId, unknownClient, undefined, app.clientId]),
        grants.consentRead(user.id, app.clientId),
        throttle.recordsRead(user.email, '203.0.113.7', 1_700_000_000_000),
        users.userIdOfEmailRead(user.email.toUpperCase()),
        users.userIdOfEmailRead(`nobody-${randomUUID()}@example.com`),
      ] as const);

      // Assess
      expect(signedIn).toEqual({ user, sessionId, signedInAt: expect.any(Number) });
      expect(apps).toEqual([app, undefined, undefined, app]);
      expect(remembered).toEqual(consent);
      expect(failures).toEqual([
        { scope: 'account-address', subject: `${user.email} 203.0.113.7`, failures: 0, nextAttemptAt: 0, stored: 'none' },
        { scope: 'account', subject: user.email, failures: 1, nextAttemptAt: 1_700_000_001_000, stored: 'live' },
        { scope: 'address', subject: '203.0.113.7', failures: 0, nextAttemptAt: 0, stored: 'none' },
      ]);
      expect(userId).toBe(user.id);
      expect(unknownEmail).toBeUndefined();
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      // session, user, app, unknown app, consent, 3 throttle records, 2 e-mail items (the repeated app read once)
      expect(batchInputs[0]!.RequestItems[table]!.Keys).toHaveLength(10);
    });

    it('sends no request when no read needs a key (no cookie, no client id, no user)', async () => {
      // Prepare
      const deps = { doc, table };
      const sessions = createSessionRepo(deps);
      const clients = createClientRepo(deps);
      const grants = createGrantRepo(deps);

      // Act
      const answers = await batch.read([
        sessions.signedInRead(undefined),
        sessions.signedInRead('not-a-session-cookie'),
        clients.clientsRead([undefined, 'x'.repeat(129)]),
        grants.consentRead(undefined, randomUUID()),
      ] as const);

      // Assess
      expect(answers).toEqual([undefined, undefined, [undefined, undefined], undefined]);
      expect(requests.total).toBe(0);
    });
  });

  describe('signedInRead', () => {
    const deps = () => ({ doc, table });

    async function signedInOf(sessionId: string, now?: Date) {
      const [signedIn] = await batch.read([createSessionRepo(deps()).signedInRead(sessionId, now)]);
      return signedIn;
    }

    it('signs in with the cookie value createSession returned: `<user id>.<43 characters>`, stored only as its hash', async () => {
      // Prepare
      const user = userNamed('Dora', 'Batch');
      await createUserRepo(deps()).createUser(user, PASSWORD_HASH);

      // Act
      const sessionId = await createSessionRepo(deps()).createSession(user.id);
      const signedIn = await signedInOf(sessionId);

      // Assess
      expect(sessionId).toMatch(new RegExp(`^${user.id}\\.[A-Za-z0-9_-]{43}$`));
      expect(signedIn).toEqual({ user, sessionId, signedInAt: expect.any(Number) });
    });

    it('signs nobody in when a stored session names another user than the cookie', async () => {
      // Prepare: a session item under the hash of a cookie claiming Bob, but naming Alice
      const [alice, bob] = [userNamed('Dora', 'Batch'), userNamed('Dora', 'Batch')];
      for (const user of [alice, bob]) await createUserRepo(deps()).createUser(user, PASSWORD_HASH);
      const forged = `${bob.id}.${'A'.repeat(43)}`;
      const hash = hashSecret(forged);
      await doc.send(new PutCommand({
        TableName: table,
        Item: { ...sessionKey(hash), ...sessionsOfUserIndexKey(alice.id, hash), userId: alice.id, expiresAt: epochSeconds(new Date()) + 3600 },
      }));
      requests.reset();

      // Act
      const signedIn = await signedInOf(forged);

      // Assess
      expect(signedIn).toBeUndefined();
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('signs nobody in once the session has expired, though its item is still there', async () => {
      // Prepare
      const user = userNamed('Dora', 'Batch');
      await createUserRepo(deps()).createUser(user, PASSWORD_HASH);
      const sessionId = await createSessionRepo(deps()).createSession(user.id);
      const expiry = new Date(Date.now() + SESSION_TTL_SECONDS * 1000 + 1000);
      const justBefore = new Date(Date.now() + SESSION_TTL_SECONDS * 1000 - 60_000);

      // Act
      const [late, inTime] = [await signedInOf(sessionId, expiry), await signedInOf(sessionId, justBefore)];

      // Assess
      expect(late).toBeUndefined();
      expect(inTime).toEqual({ user, sessionId, signedInAt: expect.any(Number) });
    });

    it('signs nobody in when the user no longer exists', async () => {
      // Prepare: a session of a user id that was never registered
      const sessionId = await createSessionRepo(deps()).createSession(randomUUID());

      // Act
      const signedIn = await signedInOf(sessionId);

      // Assess
      expect(signedIn).toBeUndefined();
    });
  });
});
