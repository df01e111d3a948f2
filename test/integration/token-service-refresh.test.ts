import { randomUUID } from 'node:crypto';
import { DeleteCommand } from '#shared/data/commands';
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { hashSecret, randomToken } from '#shared/secrets';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { REVOKED_GRANT_SECONDS } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { familyKey } from '#shared/data/item-keys';
import { InvalidClientError, InvalidScopeError } from '#shared/errors';
import {
  advance, AUDIENCE, clients, current, doc, expectInvalidGrant, expectOAuthError, familyOf, familyStatus, grants, ISSUER,
  itemsOf, tokenClient, operationsOf, requests, SECRET, seedTokens, setClock, signer, throttled, tokens, revokeToken, useTokenService,
  table, verifyAccessToken, withFailure,
} from '../support/token-service';
import type { TokenResponse } from '#shared/oauth/grant-context';

const HOUR = 3600;
const YEAR = 365 * 24 * HOUR;

// The refresh token grant at the token service (refresh: RFC 6749 §6, rotation in the family item,
// the previous token's retry until its successor is used, reuse), over DynamoDB Local; the set-up,
// factories and checks are test/support/token-service.ts.
describe('token service', () => {
  useTokenService();

  describe('refresh', () => {
    it('rotates: a new access token and a new refresh token with the same scopes', async () => {
      // Prepare
      const { client, credentials, issued, stored } = await seedTokens();
      advance(3000);

      // Act
      const response = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      expect(response).toEqual<TokenResponse>({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.any(String),
        scope: 'read_device write_device',
      });
      expect(response.refresh_token).not.toBe(issued.refresh_token);
      const { payload } = await verifyAccessToken(response.access_token);
      expect(payload).toMatchObject({ sub: stored.userId, client_id: client.clientId, iat: epochSeconds(current) });
      expect(decodeProtectedHeader(response.access_token).kid).toBe(signer.kid);
      const next = await tokens.refresh(credentials, { refreshToken: response.refresh_token });
      expect(next.refresh_token).not.toBe(response.refresh_token);
    });

    it('costs exactly two DynamoDB requests: BatchGetItem and TransactWriteItems', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
    });

    it('rotates in the family item alone: the successor current, the presented token previous, the successor sealed for its retry, no TTL', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();

      // Act
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      const items = await itemsOf(client.clientId);
      expect(items.refreshTokens).toEqual([]);
      expect(items.families).toEqual([expect.objectContaining({
        status: 'active', activeTokenHash: hashSecret(rotated.refresh_token), previousTokenHash: hashSecret(issued.refresh_token),
        rotatedAt: current.getTime(), sealedSuccessor: expect.any(String),
      })]);
      expect(items.families[0]!.expiresAt).toBeUndefined();
      expect(JSON.stringify(items)).not.toContain(rotated.refresh_token.split('.')[2]);
      expect(grantTokenNames(rotated.refresh_token)).toEqual(grantTokenNames(issued.refresh_token));
    });

    it('does not expire with time (docs/api.md#limits)', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      advance(400 * 24 * 3600);

      // Act
      const response = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      expect(response.refresh_token).toEqual(expect.any(String));
    });

    it('gives a retry of the old token 30 seconds later the same successor', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(30);

      // Act
      const retry = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      expect(retry.refresh_token).toBe(rotated.refresh_token);
      expect((await verifyAccessToken(retry.access_token)).payload.iat).toBe(epochSeconds(current));
      const next = await tokens.refresh(credentials, { refreshToken: retry.refresh_token });
      expect(next.refresh_token).not.toBe(rotated.refresh_token);
    });

    it.each([
      ['31 seconds', 31],
      ['an hour', HOUR],
      ['a year', YEAR],
    ])('gives the old token the same successor %s after the rotation while the successor is unused, reading the family alone and writing nothing', async (_, seconds) => {
      // Prepare: a rotation whose answer was lost (the client kept the old token)
      const { client, credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const before = await familyOf(issued.refresh_token);
      setClock(new Date(current.getTime() + seconds * 1000));
      requests.reset();

      // Act
      const retry = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess: a fresh access token, the same successor, and the family as it was
      expect(retry).toEqual<TokenResponse>({
        access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: rotated.refresh_token, scope: 'read_device write_device',
      });
      expect(retry.access_token).not.toBe(rotated.access_token);
      expect((await verifyAccessToken(retry.access_token)).payload).toMatchObject({ iat: epochSeconds(current), client_id: client.clientId });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await familyOf(issued.refresh_token)).toEqual(before);
    });

    it('a lost answer retried an hour later: the retry gets the successor, which then rotates as the current token, and the family stays active', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      const lost = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(HOUR);

      // Act
      const retry = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const next = await tokens.refresh(credentials, { refreshToken: retry.refresh_token });

      // Assess
      expect(retry.refresh_token).toBe(lost.refresh_token);
      expect(next.refresh_token).not.toBe(lost.refresh_token);
      expect((await itemsOf(client.clientId)).families).toEqual([expect.objectContaining({
        status: 'active', activeTokenHash: hashSecret(next.refresh_token), previousTokenHash: hashSecret(lost.refresh_token), rotatedAt: current.getTime(),
      })]);
      // The token the retry answered is now the previous one: retried again, it gets the newest.
      expect((await tokens.refresh(credentials, { refreshToken: lost.refresh_token })).refresh_token).toBe(next.refresh_token);
    });

    it('a retry of the previous token moves nothing: its successor, used later, rotates; the previous token is reuse from then on', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      for (let retry = 0; retry < 3; retry++) {
        advance(HOUR);
        expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toBe(rotated.refresh_token);
      }
      const third = await tokens.refresh(credentials, { refreshToken: rotated.refresh_token });
      advance(HOUR);

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'refresh_token_reuse' });
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: rotated.refresh_token }));
    });

    it.each([
      ['a second', 1],
      ['a year', YEAR],
    ])('treats the old token as reuse once its successor has been used, %s later', async (_, seconds) => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const third = await tokens.refresh(credentials, { refreshToken: rotated.refresh_token });
      advance(seconds);

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
    });

    it('narrows the scope of the access token to a requested subset, keeping the grant whole', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      const narrowed = await tokens.refresh(credentials, { refreshToken: issued.refresh_token, scope: 'read_device' });

      // Assess
      expect(narrowed.scope).toBe('read_device');
      expect((await verifyAccessToken(narrowed.access_token)).payload.scope).toBe('read_device');
      const whole = await tokens.refresh(credentials, { refreshToken: narrowed.refresh_token });
      expect(whole.scope).toBe('read_device write_device');
    });

    it.each([
      ['a scope the grant lacks', 'read_device read_user'],
      ['an unknown scope', 'admin'],
      ['an empty scope', ' '],
    ])('refuses %s with invalid_scope and keeps the token usable', async (_, scope) => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      const broader = tokens.refresh(credentials, { refreshToken: issued.refresh_token, scope });

      // Assess
      await expectOAuthError(broader, InvalidScopeError, 'invalid_scope', 400);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).scope).toBe('read_device write_device');
    });

    it.each([
      ['a wrong client secret', (c: ClientCredentials) => ({ ...c, clientSecret: 'wrong' })],
      ['an unknown client', (c: ClientCredentials) => ({ ...c, clientId: `unknown-${randomUUID()}` })],
    ])('answers invalid_client for %s and keeps the token usable', async (_, change) => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      const refresh = tokens.refresh(change(credentials), { refreshToken: issued.refresh_token });

      // Assess
      await expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it("refuses another client's refresh token without revoking it", async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const other = tokenClient();
      await clients.createClient(other);

      // Act
      const refresh = tokens.refresh({ clientId: other.clientId, clientSecret: SECRET, basic: false }, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(refresh);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('refuses an unknown refresh token', async () => {
      // Prepare
      const { credentials } = await seedTokens();

      // Act
      const refresh = tokens.refresh(credentials, { refreshToken: randomToken() });

      // Assess
      await expectInvalidGrant(refresh);
    });

    it('gives all of 50 simultaneous refreshes of one token the same successor, and keeps the family active', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();

      // Act
      const results = await Promise.allSettled(Array.from({ length: 50 }, () =>
        tokens.refresh(credentials, { refreshToken: issued.refresh_token })));

      // Assess
      const successes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(failures).toEqual([]);
      const successors = new Set(successes.map((r) => r.refresh_token));
      expect(successors.size).toBe(1);
      const [successor] = successors;
      expect(successor).not.toBe(issued.refresh_token);
      // Exactly one rotation was written: the family names the winner's successor, after the presented token.
      const items = await itemsOf(client.clientId);
      expect(items.families).toEqual([expect.objectContaining({
        status: 'active', activeTokenHash: hashSecret(successor!), previousTokenHash: hashSecret(issued.refresh_token),
      })]);
      expect((await tokens.refresh(credentials, { refreshToken: successor! })).refresh_token).toEqual(expect.any(String));
    });

    it('revokes the family when a token rotated by concurrent refreshes is reused after its successor was used', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const results = await Promise.all(Array.from({ length: 50 }, () =>
        tokens.refresh(credentials, { refreshToken: issued.refresh_token })));
      const successor = results[0]!.refresh_token;
      const third = await tokens.refresh(credentials, { refreshToken: successor });
      advance(HOUR);

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: successor }));
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
    });

    it('two concurrent refreshes of one token an hour apart from its issue: one rotation, both the same successor, and the successor works', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      advance(HOUR);

      // Act
      const [a, b] = await Promise.all([1, 2].map(() => tokens.refresh(credentials, { refreshToken: issued.refresh_token })));

      // Assess
      expect(a!.refresh_token).toBe(b!.refresh_token);
      expect(operationsOf('UpdateItemCommand')).toBeGreaterThanOrEqual(1);
      expect((await itemsOf(client.clientId)).families).toEqual([expect.objectContaining({
        status: 'active', activeTokenHash: hashSecret(a!.refresh_token), previousTokenHash: hashSecret(issued.refresh_token),
      })]);
      expect((await tokens.refresh(credentials, { refreshToken: a!.refresh_token })).refresh_token).not.toBe(a!.refresh_token);
    });
  });

  describe('mutants that survived the suite', () => {
    it('a retry of the previous token with a narrower scope gets an access token of that scope only, and the same successor (RFC 6749 §6)', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(1);

      // Act
      const retry = await tokens.refresh(credentials, { refreshToken: issued.refresh_token, scope: 'read_device' });

      // Assess
      expect(retry.refresh_token).toBe(rotated.refresh_token);
      expect(retry.scope).toBe('read_device');
      expect((await verifyAccessToken(retry.access_token)).payload.scope).toBe('read_device');
      // The refresh token's scope stays that of the grant (§6: identical to the one presented).
      expect((await tokens.refresh(credentials, { refreshToken: retry.refresh_token })).scope).toBe('read_device write_device');
    });

    it('a retry of the previous token asking for a scope beyond the grant is invalid_scope and gets no successor', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(1);

      // Act
      const retry = tokens.refresh(credentials, { refreshToken: issued.refresh_token, scope: 'read_device read_user' });

      // Assess
      await expectOAuthError(retry, InvalidScopeError, 'invalid_scope', 400);
      expect((await tokens.refresh(credentials, { refreshToken: rotated.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('a rotation that meets a revocation at that moment (TransactionConflictException) reads the family again and is refused', async () => {
      // Prepare: DynamoDB refuses the rotation's UpdateItem because a revocation's transaction holds
      // the family (injected once on the client: DynamoDB Local serialises), which then commits
      const { credentials, issued } = await seedTokens();
      const { familyId } = grantTokenNames(issued.refresh_token)!;
      const name = 'conflict-once';
      let conflicted = false;
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && !conflicted) {
          conflicted = true;
          await grants.revokeFamilies([{ familyId }], current);
          throw Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });
        }
        return next(args);
      }, { step: 'initialize', name });

      // Act
      let refresh: Promise<unknown>;
      try {
        refresh = tokens.refresh(credentials, { refreshToken: issued.refresh_token });
        await refresh.catch(() => undefined);
      } finally {
        doc.middlewareStack.remove(name);
      }

      // Assess
      await expectInvalidGrant(refresh);
      expect(await familyStatus(familyId)).toBe('revoked');
    });

    it('a token of the family that is neither current nor previous is reuse for the family\'s whole life (not only 30 days): the family is revoked', async () => {
      // Prepare: first → second → third, a year later
      const { credentials, issued } = await seedTokens();
      const second = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const third = await tokens.refresh(credentials, { refreshToken: second.refresh_token });
      advance(365 * 24 * 3600);
      requests.reset();

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect(await familyOf(third.refresh_token)).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(current) + REVOKED_GRANT_SECONDS });
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
    });

    it('a family gone between the read and the rotation (its item deleted) refuses the token with invalid_grant, not an error', async () => {
      // Prepare: the family's item disappears just before the rotation's UpdateItem, which then fails its condition
      const { credentials, issued } = await seedTokens();
      const { familyId } = grantTokenNames(issued.refresh_token)!;
      const name = 'family-gone';
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') {
          doc.middlewareStack.remove(name);
          await doc.send(new DeleteCommand({ TableName: table, Key: familyKey(familyId) }));
        }
        return next(args);
      }, { step: 'initialize', name });

      // Act
      let refresh: Promise<unknown>;
      try {
        refresh = tokens.refresh(credentials, { refreshToken: issued.refresh_token });
        await refresh.catch(() => undefined);
      } finally {
        doc.middlewareStack.remove(name);
      }

      // Assess
      await expectInvalidGrant(refresh);
      expect(await familyStatus(familyId)).toBeUndefined();
    });

    it('a token naming the family under another user is unknown: refused, and the family left alone', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const forged = issued.refresh_token.replace(/^[^.]+/, randomUUID());

      // Act
      const refresh = tokens.refresh(credentials, { refreshToken: forged });

      // Assess
      await expectInvalidGrant(refresh);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active' });
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('a token that is not of our shape is refused after reading the client alone', async () => {
      // Prepare
      const { credentials } = await seedTokens();

      // Act
      const refresh = tokens.refresh(credentials, { refreshToken: randomToken() });

      // Assess
      await expectInvalidGrant(refresh);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('a family whose consent is gone (a revocation whose Query missed it) cannot rotate, nor hand out its successor again, and ends', async () => {
      // Prepare
      const { credentials, issued, stored } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      await grants.deleteConsent(stored.userId, stored.clientId);
      advance(1);

      // Act
      const retry = tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const rotation = tokens.refresh(credentials, { refreshToken: rotated.refresh_token });

      // Assess (both at once: neither rejection may go unhandled while the other is awaited)
      await Promise.all([expectInvalidGrant(retry), expectInvalidGrant(rotation)]);
      expect((await itemsOf(stored.clientId)).families.map((f) => f.status)).toEqual(['revoked']);
    });

    it('a family whose consent was given again (another generation) cannot rotate', async () => {
      // Prepare
      const { credentials, issued, stored } = await seedTokens();
      await grants.saveConsent({ userId: stored.userId, clientId: stored.clientId, scopes: stored.scopes, grantedAt: formatTimestamp(current), grantGeneration: randomUUID() });

      // Act
      const rotation = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(rotation);
    });
  });

  describe('the single-item family, re-measured by mutation (2026-11-23)', () => {
    it('passes a storage failure of the rotation on, the token still current for the retry', async () => {
      const { credentials, issued } = await seedTokens();

      const outcome = await withFailure('UpdateItemCommand', throttled, () => tokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('tries a rotation that keeps meeting a revocation in flight 8 times, then refuses, the family still active', async () => {
      const { credentials, issued } = await seedTokens();
      const inFlight = () => Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });

      const outcome = await withFailure('UpdateItemCommand', inFlight, () => tokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'invalid_grant' } });
      expect(operationsOf('UpdateItemCommand')).toBe(8);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active' });
    });

    it('refuses a refresh token of our shape that names no family, and revoking it changes nothing', async () => {
      const { credentials, stored } = await seedTokens();
      const unknown = `${stored.userId}.${randomUUID()}.${randomToken()}`;

      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: unknown }));
      requests.reset();
      await revokeToken(credentials, unknown);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it("counts each token issued and each refresh-token reuse on the operators' dashboard (EMF metrics)", async () => {
      const { credentials, issued } = await seedTokens();
      vi.resetModules();
      vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
      vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
      const out: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
      try {
        const fresh = await import('#shared/oauth/token-service');
        const counted = fresh.createTokenService({ grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current });
        const { refresh_token: successor } = await counted.refresh(credentials, { refreshToken: issued.refresh_token });
        // The successor used by the silent service (the first import: its metrics are muted), then the first token again.
        await tokens.refresh(credentials, { refreshToken: successor });
        await counted.refresh(credentials, { refreshToken: issued.refresh_token }).catch(() => undefined);
      } finally {
        vi.restoreAllMocks();
        vi.unstubAllEnvs();
        vi.resetModules();
      }

      const metrics = out.filter((line) => line.includes('"_aws"')).map((line) => Object.keys(JSON.parse(line)).find((name) => /^[A-Z]/.test(name)));
      expect(metrics).toEqual(['TokensIssued', 'RefreshTokenReuse', 'GrantsRevoked']);
    });
  });
});
