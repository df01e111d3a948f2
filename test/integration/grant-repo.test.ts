import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { createGrantRepo, GrantWriteError } from '#shared/data/grant-repo';
import { clientKey, familyKey } from '#shared/data/item-keys';
import type { AuthorizationCode, Consent, TokenFamily } from '#shared/domain/grant';
import { REVOKED_GRANT_SECONDS } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { withFailure as injectFailure } from '../support/inject-failure';
import { useRepoTable } from '../support/repos';

// Consents, codes and token families through the grant repository on DynamoDB Local: what each write
// lets through or refuses when a user revokes an application, a code is replayed or a token raced.
// The token service's own tests (token-service-*.test.ts) show the same from the token endpoint.

// In the future: DynamoDB Local deletes items past their TTL as DynamoDB does (a code's 10 minutes).
const NOW = new Date('2046-11-23T10:00:00.000Z');

describe('grant repository', () => {
  const { doc, table, repos: { grants }, requests } = useRepoTable();

  const consentOf = (userId: string, clientId: string, grantGeneration: string | undefined = randomUUID()): Consent =>
    ({ userId, clientId, scopes: ['read_device'], grantedAt: '2026-11-23T10:00:00.000', ...(grantGeneration ? { grantGeneration } : {}) });
  /** A new code under a consent (not stored): its value and its item. */
  const codeOf = (consent: Consent) => newAuthorizationCode({
    clientId: consent.clientId, userId: consent.userId, redirectUri: 'https://app.example/callback', scopes: consent.scopes,
    expiresAt: epochSeconds(NOW) + 600, ...(consent.grantGeneration ? { grantGeneration: consent.grantGeneration } : {}),
  }).stored;
  const stored = async (Key: Record<string, string>) => (await doc.send(new GetCommand({ TableName: table, Key, ConsistentRead: true }))).Item;
  /** A consent stored, and a code issued under it. */
  async function issued(generation: string | undefined = randomUUID()) {
    const consent = consentOf(randomUUID(), `client-${randomUUID()}`, generation);
    const code = codeOf(consent);
    await grants.saveConsent(consent);
    await grants.createCode(code);
    return { consent, code };
  }
  /** The code's exchange at `at`, its first refresh token's hash new. */
  const redeem = (code: AuthorizationCode, at = NOW, codeHash = code.codeHash) => grants.redeemCode(code.familyId, codeHash, hashSecret(randomToken()), at);
  const withFailure = <T>(command: string, failure: () => Error, act: () => Promise<T>, times?: number) => injectFailure(doc, command, failure, act, times);
  const cancelled = (...codes: string[]) => () =>
    Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })) });
  const elsewhere = () => createGrantRepo({ doc, table: `missing-${randomUUID()}` });

  describe('consents', () => {
    it("lists the applications a user authorized, and nothing of anyone else's", async () => {
      const [userId, other] = [randomUUID(), randomUUID()];
      const mine = [consentOf(userId, 'client-a'), consentOf(userId, 'client-b')];
      for (const consent of [...mine, consentOf(other, 'client-a')]) await grants.saveConsent(consent);
      await doc.send(new PutCommand({ TableName: table, Item: { pk: `USER#${userId}`, sk: 'PROFILE', firstname: 'Una' } }));

      const listed = await grants.listConsentsByUser(userId);

      expect(listed.sort((a, b) => a.clientId.localeCompare(b.clientId))).toEqual(mine);
      expect(await grants.listConsentsByUser(randomUUID())).toEqual([]);
    });

    it('records a first consent and its code together', async () => {
      const consent = consentOf(randomUUID(), `client-${randomUUID()}`);
      const code = codeOf(consent);

      expect(await grants.saveConsentWithCode(consent, undefined, code)).toBe(true);

      expect(await grants.getCodeClientAndConsent(code.familyId, consent.clientId, consent.userId)).toEqual({ client: undefined, consent, code });
    });

    it('reads the client with a code or family unless told not to (the token endpoint has it: client-cache.ts)', async () => {
      const consent = consentOf(randomUUID(), `client-${randomUUID()}`);
      const code = codeOf(consent);
      await grants.saveConsentWithCode(consent, undefined, code);
      const client = { ...clientKey(consent.clientId), clientId: consent.clientId, secretHash: hashSecret(randomToken()) };
      await doc.send(new PutCommand({ TableName: table, Item: client }));

      const byDefault = await grants.getCodeClientAndConsent(code.familyId, consent.clientId, consent.userId);
      const without = await grants.getCodeClientAndConsent(code.familyId, consent.clientId, consent.userId, false);
      const familyByDefault = await grants.getFamilyClientAndConsent(code.familyId, consent.clientId, consent.userId);
      const familyWithout = await grants.getFamilyClientAndConsent(code.familyId, consent.clientId, consent.userId, false);

      expect(byDefault).toEqual({ client: { clientId: consent.clientId, secretHash: client.secretHash }, consent, code });
      expect(without).toEqual({ client: undefined, consent, code });
      expect(familyByDefault.client?.clientId).toBe(consent.clientId);
      expect(familyWithout).toEqual({ client: undefined, consent, family: code });
    });

    it('refuses an allow decided on a consent that a revocation (or another allow) changed since, and writes neither consent nor code', async () => {
      const { consent } = await issued();
      const revokedMeanwhile = consentOf(randomUUID(), `client-${randomUUID()}`);
      const code = codeOf(consent);

      // Decided on "no consent yet", but one was stored since.
      expect(await grants.saveConsentWithCode({ ...consent, grantGeneration: randomUUID() }, undefined, code)).toBe(false);
      // Decided on a consent that was revoked since.
      expect(await grants.saveConsentWithCode(revokedMeanwhile, revokedMeanwhile, codeOf(revokedMeanwhile))).toBe(false);
      // Decided on a consent given again since (another generation).
      expect(await grants.saveConsentWithCode(consent, { ...consent, grantGeneration: randomUUID() }, code)).toBe(false);

      expect(await grants.getConsent(consent.userId, consent.clientId)).toEqual(consent);
      expect(await grants.getConsent(revokedMeanwhile.userId, revokedMeanwhile.clientId)).toBeUndefined();
      expect(await stored(familyKey(code.familyId))).toBeUndefined();
      // Decided on the consent as it stands: accepted.
      const next = { ...consent, scopes: ['read_device', 'write_device'] };
      expect(await grants.saveConsentWithCode(next, consent, code)).toBe(true);
      expect(await grants.getConsent(consent.userId, consent.clientId)).toEqual(next);
    });

    it('records an allow decided on a consent from before grant generations only while the stored one has none either', async () => {
      const legacy = consentOf(randomUUID(), `client-${randomUUID()}`, undefined);
      await grants.saveConsent(legacy);
      const widened = { ...legacy, scopes: ['read_device', 'write_device'] };

      // Decided on the legacy consent as it stands: accepted, and it keeps having no generation.
      expect(await grants.saveConsentWithCode(widened, legacy, codeOf(widened))).toBe(true);
      expect(await grants.getConsent(legacy.userId, legacy.clientId)).toEqual(widened);
      // Revoked and given again since (now with a generation): the legacy decision is refused.
      await grants.saveConsent({ ...legacy, grantGeneration: randomUUID() });
      expect(await grants.saveConsentWithCode(widened, legacy, codeOf(widened))).toBe(false);
    });

    it('answers an allow racing a revocation in flight (a transaction conflict on the consent) as changed, and passes other failures on', async () => {
      const consent = consentOf(randomUUID(), `client-${randomUUID()}`);
      const save = () => grants.saveConsentWithCode(consent, undefined, codeOf(consent));

      expect(await withFailure('TransactWriteItemsCommand', cancelled('TransactionConflict', 'None'), save)).toEqual({ status: 'fulfilled', value: false });
      // A family id already taken is no change of the consent: not answered as one.
      const taken = await withFailure('TransactWriteItemsCommand', cancelled('None', 'ConditionalCheckFailed'), save);
      expect(taken).toMatchObject({ status: 'rejected', reason: { name: 'TransactionCanceledException' } });
      await expect(elsewhere().saveConsentWithCode(consent, undefined, codeOf(consent))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      expect(await grants.getConsent(consent.userId, consent.clientId)).toBeUndefined();
    });
  });

  describe('codes', () => {
    it('stores a code as its family\'s item, pending, indexed under the client, with its TTL; a family id already taken is refused', async () => {
      const { code } = await issued();

      expect(await stored(familyKey(code.familyId))).toEqual({
        ...familyKey(code.familyId), gsi1pk: `FAMILIES#${code.clientId}`, gsi1sk: `USER#${code.userId}#${code.familyId}`, ...code,
      });
      expect(code).toMatchObject({ status: 'pending', expiresAt: epochSeconds(NOW) + 600 });
      await expect(grants.createCode({ ...code, codeHash: hashSecret(randomToken()) })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    });

    it('redeems a pending code once: it becomes the active family, keeps the code\'s hash, loses its TTL and what only the exchange needed', async () => {
      const { code } = await issued();
      const tokenHash = hashSecret(randomToken());

      await grants.redeemCode(code.familyId, code.codeHash, tokenHash, new Date(NOW.getTime() + 1000));

      expect(await grants.getFamily(code.familyId)).toEqual({
        familyId: code.familyId, clientId: code.clientId, userId: code.userId, scopes: code.scopes, grantGeneration: code.grantGeneration,
        codeHash: code.codeHash, status: 'active', activeTokenHash: tokenHash, createdAt: '2046-11-23T10:00:01.000',
      });
      await expect(redeem(code)).rejects.toEqual(new GrantWriteError('code_used'));
      expect(await grants.getFamily(code.familyId)).toMatchObject({ activeTokenHash: tokenHash });
    });

    it('refuses, as code_used and writing nothing, a code revoked, expired, gone, or presented with another hash', async () => {
      const revoked = await issued();
      await grants.revokeFamily(revoked.code.familyId, NOW, 'user_revoked');
      const expired = await issued();
      const forged = await issued();
      const gone = codeOf(consentOf(randomUUID(), `client-${randomUUID()}`));

      await expect(redeem(revoked.code)).rejects.toEqual(new GrantWriteError('code_used'));
      await expect(redeem(expired.code, new Date((expired.code.expiresAt) * 1000))).rejects.toEqual(new GrantWriteError('code_used'));
      await expect(redeem(forged.code, NOW, hashSecret(randomToken()))).rejects.toEqual(new GrantWriteError('code_used'));
      await expect(redeem(gone)).rejects.toEqual(new GrantWriteError('code_used'));

      expect(await stored(familyKey(revoked.code.familyId))).toMatchObject({ status: 'revoked', revokedReason: 'user_revoked' });
      for (const { code } of [expired, forged]) expect(await grants.getFamily(code.familyId)).toEqual(code);
      expect(await stored(familyKey(gone.familyId))).toBeUndefined();
      // One second before its end, the expired one was still good.
      await redeem(expired.code, new Date((expired.code.expiresAt - 1) * 1000));
    });

    it('tells a revocation in flight (a conflict to retry) from other failures, which it passes on, writing nothing', async () => {
      const { code } = await issued();

      expect(await withFailure('UpdateItemCommand', () => Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' }), () => redeem(code)))
        .toMatchObject({ status: 'rejected', reason: { name: 'GrantWriteError', reason: 'conflict' } });
      await expect(elsewhere().redeemCode(code.familyId, code.codeHash, hashSecret(randomToken()), NOW)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      // None of these wrote anything: the code still works.
      expect(await grants.getFamily(code.familyId)).toEqual(code);
      await redeem(code);
    });
  });

  describe('families', () => {
    async function activeFamily(): Promise<TokenFamily> {
      const { code } = await issued();
      await redeem(code);
      const family = (await grants.getFamily(code.familyId)) as TokenFamily;
      requests.reset();
      return family;
    }

    it('rotates only the current token of an active family; a rotated or revoked one is token_rotated', async () => {
      const family = await activeFamily();
      const successor = hashSecret(randomToken());

      await grants.rotateRefreshToken(family.familyId, family.activeTokenHash, successor, 'sealed', 1000);
      expect(await grants.getFamily(family.familyId)).toMatchObject({
        activeTokenHash: successor, previousTokenHash: family.activeTokenHash, sealedSuccessor: 'sealed', rotatedAt: 1000,
      });
      await expect(grants.rotateRefreshToken(family.familyId, family.activeTokenHash, hashSecret(randomToken()), 'x', 2000))
        .rejects.toEqual(new GrantWriteError('token_rotated'));
      await grants.revokeFamily(family.familyId, NOW, 'token_revoked');
      await expect(grants.rotateRefreshToken(family.familyId, successor, hashSecret(randomToken()), 'x', 2000)).rejects.toEqual(new GrantWriteError('token_rotated'));
      expect(await grants.getFamily(family.familyId)).toMatchObject({ activeTokenHash: successor, rotatedAt: 1000 });
    });

    it('answers a rotation that meets a transaction in flight as a conflict, and passes storage failures on', async () => {
      const family = await activeFamily();
      const rotate = () => grants.rotateRefreshToken(family.familyId, family.activeTokenHash, hashSecret(randomToken()), 'sealed', 1000);

      const inFlight = () => Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });
      expect(await withFailure('UpdateItemCommand', inFlight, rotate)).toMatchObject({ status: 'rejected', reason: { name: 'GrantWriteError', reason: 'conflict' } });
      await expect(elsewhere().rotateRefreshToken(family.familyId, family.activeTokenHash, 'h', 's', 1)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      await rotate();
    });

    it('records why a family ended: the client by default (RFC 7009), the user for a revocation of the application', async () => {
      const [byClient, byUser] = [await activeFamily(), await activeFamily()];

      await grants.revokeFamily(byClient.familyId, NOW, 'token_revoked');
      await grants.revokeFamilies([{ familyId: byUser.familyId }], NOW);

      expect(await grants.getFamily(byClient.familyId)).toMatchObject({ status: 'revoked', revokedReason: 'token_revoked', expiresAt: epochSeconds(NOW) + REVOKED_GRANT_SECONDS });
      expect(await grants.getFamily(byUser.familyId)).toMatchObject({ status: 'revoked', revokedReason: 'user_revoked', expiresAt: epochSeconds(NOW) + REVOKED_GRANT_SECONDS });
    });

    it('passes a storage failure of a revocation on rather than reporting the family revoked', async () => {
      const family = await activeFamily();

      await expect(elsewhere().revokeFamily(family.familyId, NOW, 'token_revoked')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      expect(await grants.getFamily(family.familyId)).toMatchObject({ status: 'active' });
    });

    it('revokes families that are all gone since they were listed without error, and sends nothing more', async () => {
      const gone = [{ familyId: randomUUID() }, { familyId: randomUUID() }];

      await grants.revokeFamilies(gone, NOW);

      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await stored(familyKey(gone[0]!.familyId))).toBeUndefined();
    });

    it('sends a revocation that meets transactions in flight at most 3 times, and one refused for another reason once', async () => {
      const family = await activeFamily();
      const revoke = () => grants.revokeFamilies([family], NOW);

      expect(await withFailure('TransactWriteItemsCommand', cancelled('TransactionConflict'), revoke)).toMatchObject({ status: 'rejected' });
      expect(requests.operations).toEqual(Array.from({ length: 3 }, () => 'TransactWriteItemsCommand'));
      requests.reset();
      expect(await withFailure('TransactWriteItemsCommand', cancelled('ThrottlingError'), revoke)).toMatchObject({ status: 'rejected' });
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await grants.getFamily(family.familyId)).toMatchObject({ status: 'active' });
      requests.reset();

      expect(await withFailure('TransactWriteItemsCommand', cancelled('TransactionConflict'), revoke, 2)).toEqual({ status: 'fulfilled', value: undefined });
      expect(requests.operations).toHaveLength(3);
      expect(await grants.getFamily(family.familyId)).toMatchObject({ status: 'revoked' });
    });
  });

  describe('replaceConsent and lastUseOf (the grant page)', () => {
    it('replaces a consent only over the revision and generation it was read at: a stale or replayed write changes nothing', async () => {
      const first = consentOf(randomUUID(), `client-${randomUUID()}`);
      await grants.saveConsent(first);
      const edited = { ...first, scopes: [], revision: 1 };
      requests.reset();

      expect(await grants.replaceConsent(edited, first)).toBe(true);
      expect(requests.operations).toEqual(['PutItemCommand']);
      expect(await grants.replaceConsent({ ...edited, revision: 2, scopes: ['write_device'] }, first)).toBe(false);
      expect(await grants.replaceConsent({ ...edited, revision: 2, scopes: ['write_device'] }, { ...edited, grantGeneration: randomUUID() })).toBe(false);
      expect(await grants.getConsent(first.userId, first.clientId)).toEqual(edited);
      expect(await grants.replaceConsent({ ...edited, revision: 2, scopes: ['read_user'] }, edited)).toBe(true);
      expect((await grants.getConsent(first.userId, first.clientId))!.scopes).toEqual(['read_user']);
      // A consent from before generations is replaced only over one without a generation.
      const old = consentOf(randomUUID(), `client-${randomUUID()}`, undefined);
      await grants.saveConsent(old);
      expect(await grants.replaceConsent({ ...old, revision: 1 }, { ...old, grantGeneration: 'g' })).toBe(false);
      expect(await grants.replaceConsent({ ...old, revision: 1 }, old)).toBe(true);
      // And none over a consent that is gone.
      await grants.deleteConsent(old.userId, old.clientId);
      expect(await grants.replaceConsent({ ...old, revision: 2 }, { ...old, revision: 1 })).toBe(false);
      expect(await grants.getConsent(old.userId, old.clientId)).toBeUndefined();
    });

    it('tells when the grant was last used: its newest rotation or exchange among active families; none when there is none', async () => {
      const { consent, code } = await issued();
      expect(await grants.lastUseOf(consent.clientId, consent.userId)).toBeUndefined();
      await redeem(code, NOW);
      const exchanged = await grants.lastUseOf(consent.clientId, consent.userId);
      expect(exchanged?.toISOString()).toBe(NOW.toISOString());
      const later = NOW.getTime() + 3_600_000;
      const token = randomToken();
      await doc.send(new PutCommand({ TableName: table, Item: { ...(await stored(familyKey(code.familyId)))!, rotatedAt: later, activeTokenHash: hashSecret(token) } }));
      expect((await grants.lastUseOf(consent.clientId, consent.userId))?.getTime()).toBe(later);
      await grants.revokeFamily(code.familyId, NOW, 'token_revoked');
      expect(await grants.lastUseOf(consent.clientId, consent.userId)).toBeUndefined();
    });
  });
});
