import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, type TransactWriteCommandInput } from '#shared/data/commands';
import { beforeEach, describe, expect, it } from 'vitest';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { clientKey, consentKey, familyKey } from '#shared/data/item-keys';
import type { Client } from '#shared/domain/client';
import { REVOKED_GRANT_SECONDS, type TokenFamily } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { NotFoundError } from '#shared/errors';
import { makeClient } from '../support/factories';
import { useRepoTable } from '../support/repos';

const MISSING = 'No such application.';

/**
 * Revoking the token families of an application (or of one user of it) together with the
 * deletion that ends the grant: grants.grantsOf + grants.revokeFamiliesThen, against DynamoDB
 * Local, with the requests and the size of each transaction counted. Each family is revoked with
 * its current refresh token's TTL: two items per family.
 */
describe('grant revocation in transactions', () => {
  const { doc, table, repos: { grants, clients }, requests } = useRepoTable();
  /** The items of every TransactWriteItems sent, as the document client saw them. */
  const transactions: NonNullable<TransactWriteCommandInput['TransactItems']>[] = [];
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        transactions.push(structuredClone((args.input as TransactWriteCommandInput).TransactItems ?? []));
      }
      return next(args);
    },
    { step: 'initialize', name: 'record-transactions' },
  );
  beforeEach(() => forget());

  function forget() {
    requests.reset();
    transactions.length = 0;
  }

  /** A registered application of a developer of its own. */
  async function registeredClient(): Promise<Client> {
    const client = makeClient();
    await clients.createClient(client);
    return client;
  }

  /**
   * Creates `count` token families of the client, as the token endpoint does: a code, then the
   * code's redemption, which writes the family (holding its first refresh token's hash). Returns their ids.
   */
  async function families(clientId: string, count: number, userIds = [randomUUID()]): Promise<string[]> {
    const ids: string[] = [];
    const generations = new Map<string, string>();
    for (const userId of userIds) generations.set(userId, await consentOf(userId, clientId));
    for (let start = 0; start < count; start += 25) {
      ids.push(...await Promise.all(Array.from({ length: Math.min(25, count - start) }, async (_, i) => {
        const userId = userIds[(start + i) % userIds.length]!;
        const { stored } = newAuthorizationCode({
          clientId, userId, redirectUri: 'https://app.example/callback', scopes: ['read_user'], expiresAt: Math.floor(Date.now() / 1000) + 60,
          grantGeneration: generations.get(userId)!,
        });
        await grants.createCode(stored);
        await grants.redeemCode(stored.familyId, stored.codeHash, hashSecret(randomToken()), new Date());
        return stored.familyId;
      })));
    }
    forget();
    return ids;
  }

  /** The generation of the user's consent to the client, recorded first if there is none yet (a code needs one to be redeemed). */
  async function consentOf(userId: string, clientId: string): Promise<string> {
    const stored = await grants.getConsent(userId, clientId);
    if (stored?.grantGeneration) return stored.grantGeneration;
    const grantGeneration = randomUUID();
    await grants.saveConsent({ userId, clientId, scopes: ['read_user'], grantedAt: '2026-01-02T03:04:05.678', grantGeneration });
    return grantGeneration;
  }

  /** The active families of a client (or of one user of it), as the revocation takes them. */
  async function activeOf(clientId: string, userId?: string) {
    const { families: active } = await grants.grantsOf(clientId, userId);
    forget();
    return active;
  }

  const idsOf = (active: readonly { familyId: string }[]) => active.map((f) => f.familyId);

  /** The stored item of a key, read without the repositories. */
  async function item(Key: Record<string, string>) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key, ConsistentRead: true }));
    return Item;
  }

  async function statuses(familyIds: readonly string[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const id of familyIds) {
      const status = (await grants.getFamily(id))?.status ?? 'missing';
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }

  const sorted = (ids: readonly string[]) => [...ids].sort();

  describe('grantsOf', () => {
    it('finds the active families and the consents of the client, or of one user of it, in one Query', async () => {
      // Prepare: two users' families, one of them already revoked, their consents, and another client's family and consent
      const client = await registeredClient();
      const other = await registeredClient();
      const [ann, bob] = [randomUUID(), randomUUID()];
      const ofAnn = await families(client.clientId, 3, [ann]);
      const ofBob = await families(client.clientId, 2, [bob]);
      await families(other.clientId, 1, [ann]);
      for (const [userId, clientId] of [[ann, client.clientId], [bob, client.clientId], [ann, other.clientId]] as const) {
        await grants.saveConsent({ userId, clientId, scopes: ['read_user'], grantedAt: '2026-01-02T03:04:05.678' });
      }
      await grants.revokeFamily(ofAnn[0]!, new Date(), 'token_revoked');
      forget();

      // Act
      const all = await grants.grantsOf(client.clientId);
      const allRequests = [...requests.operations];
      const annsOnly = await grants.grantsOf(client.clientId, ann);
      const operations = [...requests.operations];

      // Assess
      expect(sorted(idsOf(all.families))).toEqual(sorted([...ofAnn.slice(1), ...ofBob]));
      expect(sorted(all.consentUserIds)).toEqual(sorted([ann, bob]));
      expect(sorted(idsOf(annsOnly.families))).toEqual(sorted(ofAnn.slice(1)));
      expect(annsOnly.consentUserIds).toEqual([ann]);
      expect(allRequests).toEqual(['QueryCommand']);
      expect(operations).toEqual(['QueryCommand', 'QueryCommand']);
    });
  });

  describe('grantsOf, over more than one page', () => {
    it("follows LastEvaluatedKey: a user's 7 families, read 2 to a page, are all found and all revoked", async () => {
      // Prepare: DynamoDB Local pages at 1 MB; a Limit of 2 on the client's Query makes the same
      // pages the real path meets at a thousand families
      const client = await registeredClient();
      const ann = randomUUID();
      const ids = await families(client.clientId, 7, [ann]);
      const name = 'two-per-page';
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') (args.input as { Limit?: number }).Limit = 2;
        return next(args);
      }, { step: 'initialize', name });

      // Act
      let found: Awaited<ReturnType<typeof grants.grantsOf>>;
      try {
        found = await grants.grantsOf(client.clientId, ann);
      } finally {
        doc.middlewareStack.remove(name);
      }
      const queries = requests.operations.filter((operation) => operation === 'QueryCommand').length;
      await grants.revokeFamilies(found.families);

      // Assess: 7 families and the consent, 2 to a page: 4 pages, and a fifth that finds the end
      expect(queries).toBeGreaterThanOrEqual(4);
      expect(sorted(idsOf(found.families))).toEqual(sorted(ids));
      expect(found.consentUserIds).toEqual([ann]);
      expect(await statuses(ids)).toEqual({ revoked: 7 });
    });
  });

  describe('revokeFamiliesThen, deleting the application last', () => {
    it('150 families: two transactions (100 families, then 50 and the deletion); every family revoked with a TTL, the application gone', async () => {
      // Prepare
      const client = await registeredClient();
      const ids = await families(client.clientId, 150, [randomUUID(), randomUUID(), randomUUID()]);
      const other = await registeredClient();
      const [otherFamily] = await families(other.clientId, 1);
      const active = await activeOf(client.clientId);
      const now = new Date();

      // Act
      await grants.revokeFamiliesThen(active, clients.deleteClientItem(client.developerId, client.clientId), MISSING, { now });

      // Assess
      expect(requests.operations).toEqual(Array(2).fill('TransactWriteItemsCommand'));
      expect(transactions.map((items) => items.length)).toEqual([100, 51]);
      expect(transactions[0]!.every((item) => item.Update !== undefined)).toBe(true);
      expect(transactions[1]!.at(-1)!.Delete!.Key).toEqual(clientKey(client.clientId));
      expect(await statuses(ids)).toEqual({ revoked: 150 });
      for (const { familyId } of active) {
        expect((await item(familyKey(familyId)))?.expiresAt).toBe(epochSeconds(now) + REVOKED_GRANT_SECONDS);
      }
      expect(await clients.getClient(client.clientId)).toBeUndefined();
      expect(await activeOf(client.clientId)).toEqual([]);
      // Another application's grants are untouched.
      expect((await grants.getFamily(otherFamily!))!.status).toBe('active');
      expect(await clients.getClient(other.clientId)).toEqual(other);
    });

    it.each([
      [0, [1]],
      [1, [2]],
      [49, [50]],
      [99, [100]],
      [100, [100, 1]],
      [199, [100, 100]],
    ])('%i families: transactions of %j items', async (count, sizes) => {
      // Prepare
      const client = await registeredClient();
      const ids = await families(client.clientId, count);
      const active = await activeOf(client.clientId);

      // Act
      await grants.revokeFamiliesThen(active, clients.deleteClientItem(client.developerId, client.clientId), MISSING);

      // Assess
      expect(transactions.map((items) => items.length)).toEqual(sizes);
      expect(requests.operations).toEqual(sizes.map(() => 'TransactWriteItemsCommand'));
      expect(await statuses(ids)).toEqual(count ? { revoked: count } : {});
      expect(await clients.getClient(client.clientId)).toBeUndefined();
    });

    it('deletes the consents given as `deleting` before the application, in the same transaction', async () => {
      // Prepare: two users consented, one of them holds a family
      const client = await registeredClient();
      const [ann, bob] = [randomUUID(), randomUUID()];
      await families(client.clientId, 1, [ann]);
      for (const userId of [ann, bob]) {
        await grants.saveConsent({ userId, clientId: client.clientId, scopes: ['read_user'], grantedAt: '2026-01-02T03:04:05.678' });
      }
      const found = await grants.grantsOf(client.clientId);
      forget();

      // Act
      await grants.revokeFamiliesThen(found.families, clients.deleteClientItem(client.developerId, client.clientId), MISSING, {
        deleting: found.consentUserIds.map((userId) => grants.deleteConsentItem(userId, client.clientId)),
      });

      // Assess
      expect(transactions.map((items) => items.length)).toEqual([4]);
      expect(await grants.getConsent(ann, client.clientId)).toBeUndefined();
      expect(await grants.getConsent(bob, client.clientId)).toBeUndefined();
      expect(await grants.grantsOf(client.clientId)).toEqual({ families: [], consentUserIds: [] });
    });

    it('revokes a family rotated since the Query all the same, in the one transaction (no token is stored apart from it)', async () => {
      // Prepare: the family rotates between the Query and the revocation
      const client = await registeredClient();
      const [familyId] = await families(client.clientId, 1);
      const [stale] = await activeOf(client.clientId);
      const { activeTokenHash } = (await grants.getFamily(familyId!)) as TokenFamily;
      await grants.rotateRefreshToken(familyId!, activeTokenHash, hashSecret(randomToken()), 'sealed', Date.now());
      forget();

      // Act
      await grants.revokeFamiliesThen([stale!], clients.deleteClientItem(client.developerId, client.clientId), MISSING);

      // Assess
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await statuses([familyId!])).toEqual({ revoked: 1 });
      expect(await clients.getClient(client.clientId)).toBeUndefined();
    });

    it('leaves out a family that no longer exists (its TTL passed since the Query) and sends the rest again', async () => {
      // Prepare
      const client = await registeredClient();
      const [gone, kept] = await families(client.clientId, 2);
      const active = await activeOf(client.clientId);
      await doc.send(new DeleteCommand({ TableName: table, Key: familyKey(gone!) }));
      forget();

      // Act
      await grants.revokeFamiliesThen(active, clients.deleteClientItem(client.developerId, client.clientId), MISSING);

      // Assess
      expect(requests.operations).toEqual(['TransactWriteItemsCommand', 'TransactWriteItemsCommand']);
      expect(transactions.map((items) => items.length)).toEqual([3, 2]);
      expect(await statuses([gone!, kept!])).toEqual({ missing: 1, revoked: 1 });
      expect(await clients.getClient(client.clientId)).toBeUndefined();
    });

    it("another developer's id, 99 families: NotFoundError and nothing revoked, all in one transaction", async () => {
      // Prepare
      const client = await registeredClient();
      const ids = await families(client.clientId, 99);
      const active = await activeOf(client.clientId);

      // Act
      const outcome = grants.revokeFamiliesThen(active, clients.deleteClientItem(randomUUID(), client.clientId), MISSING);

      // Assess
      await expect(outcome).rejects.toThrow(NotFoundError);
      await expect(outcome).rejects.toThrow(MISSING);
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(transactions.map((items) => items.length)).toEqual([100]);
      expect(await statuses(ids)).toEqual({ active: 99 });
      expect(await clients.getClient(client.clientId)).toEqual(client);
    });

    it('an application that no longer exists: NotFoundError and nothing revoked', async () => {
      // Prepare: families left of an application whose item is gone
      const client = makeClient();
      const ids = await families(client.clientId, 3);
      const active = await activeOf(client.clientId);

      // Act
      const outcome = grants.revokeFamiliesThen(active, clients.deleteClientItem(client.developerId, client.clientId), MISSING);

      // Assess
      await expect(outcome).rejects.toThrow(NotFoundError);
      expect(await statuses(ids)).toEqual({ active: 3 });
    });

    it("another developer's id, 120 families: the first 100 are revoked, the rest and the application stay, and a retry by the owner finishes", async () => {
      // Prepare
      const client = await registeredClient();
      await families(client.clientId, 120);
      const active = await activeOf(client.clientId);

      // Act
      const outcome = grants.revokeFamiliesThen(active, clients.deleteClientItem(randomUUID(), client.clientId), MISSING);
      await expect(outcome).rejects.toThrow(NotFoundError);
      const afterFailure = { operations: [...requests.operations], statuses: await statuses(idsOf(active)), client: await clients.getClient(client.clientId) };
      const left = await activeOf(client.clientId);
      await grants.revokeFamiliesThen(left, clients.deleteClientItem(client.developerId, client.clientId), MISSING);

      // Assess
      expect(afterFailure).toEqual({
        operations: ['TransactWriteItemsCommand', 'TransactWriteItemsCommand'],
        statuses: { revoked: 100, active: 20 },
        client,
      });
      expect(sorted(idsOf(left))).toEqual(sorted(idsOf(active.slice(100))));
      expect(transactions.map((items) => items.length)).toEqual([21]);
      expect(await statuses(idsOf(active))).toEqual({ revoked: 120 });
      expect(await clients.getClient(client.clientId)).toBeUndefined();
    });
  });

  describe('revokeFamiliesThen, forgetting a consent last', () => {
    it("revokes one user's families of the application and deletes the consent, in one transaction; other users' grants stay", async () => {
      // Prepare
      const client = await registeredClient();
      const [ann, bob] = [randomUUID(), randomUUID()];
      const ofAnn = await families(client.clientId, 4, [ann]);
      const ofBob = await families(client.clientId, 2, [bob]);
      for (const userId of [ann, bob]) {
        await grants.saveConsent({ userId, clientId: client.clientId, scopes: ['read_user'], grantedAt: '2026-01-02T03:04:05.678' });
      }
      const active = await activeOf(client.clientId, ann);

      // Act
      await grants.revokeFamiliesThen(active, grants.deleteConsentItem(ann, client.clientId), MISSING);

      // Assess
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(transactions[0]!.map((item) => item.Update?.Key ?? item.Delete?.Key)).toEqual([
        ...active.map(({ familyId }) => familyKey(familyId)),
        consentKey(ann, client.clientId),
      ]);
      expect(await statuses(ofAnn)).toEqual({ revoked: 4 });
      expect(await statuses(ofBob)).toEqual({ active: 2 });
      expect(await grants.getConsent(ann, client.clientId)).toBeUndefined();
      expect(await grants.getConsent(bob, client.clientId)).toBeDefined();
      expect(await clients.getClient(client.clientId)).toEqual(client);
    });
  });
});
