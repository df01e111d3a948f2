import { randomUUID } from 'node:crypto';
import { DeleteCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { CODE_TTL_SECONDS, issueCode } from '#shared/oauth/authorize-request';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { hashSecret, randomToken } from '#shared/secrets';
import { SigningUnavailableError } from '#shared/keys/signer';
import { grantTokenNames, newGrantToken } from '#shared/oauth/grant-tokens';
import { createTokenService } from '#shared/oauth/token-service';
import { familyKey } from '#shared/data/item-keys';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { AppError, InvalidClientError, InvalidGrantError } from '#shared/errors';
import {
  advance, AUDIENCE, clients, codeItem, current, doc, expectInvalidGrant, expectNothingWritten, expectOAuthError, familyOf,
  familyStatus, grants, ISSUER, itemsOf, tokenClient, operationsOf, pkcePair, REDIRECT_URI, requests, SECRET, seedCode,
  seedTokens, setClock, signer, START, table, throttled, tokens, useTokenService, verifyAccessToken, withFailure,
} from '../support/token-service';
import type { TokenResponse } from '#shared/oauth/grant-context';

// The authorization code grant at the token service (exchangeCode: RFC 6749 §4.1.3, PKCE of RFC 7636),
// over DynamoDB Local; the set-up, factories and checks are test/support/token-service.ts.
describe('token service', () => {
  useTokenService();

  describe('exchangeCode', () => {
    it('returns the token response of docs/api.md#token-response with a signed RFC 9068 access token', async () => {
      // Prepare
      const { client, credentials, code, stored } = await seedCode();

      // Act
      const response = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      expect(response).toEqual<TokenResponse>({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^[0-9a-f-]{36}\.[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/),
        scope: 'read_device write_device',
      });
      expect(grantTokenNames(response.refresh_token)).toEqual({ userId: stored.userId, familyId: expect.any(String) });
      const { payload, protectedHeader } = await verifyAccessToken(response.access_token);
      expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'at+jwt', kid: signer.kid });
      expect(payload).toMatchObject({
        iss: ISSUER, aud: AUDIENCE, sub: stored.userId, client_id: client.clientId, scope: 'read_device write_device',
        iat: epochSeconds(START), exp: epochSeconds(START) + 3600,
      });
      expect(payload.jti).toEqual(expect.any(String));
    });

    it('stores the refresh token only as a hash, in its active family (no refresh-token item), which the code became', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();

      // Act
      const response = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      const items = await itemsOf(client.clientId);
      expect(items.families).toHaveLength(1);
      expect(items.families[0]).toMatchObject({
        status: 'active', scopes: ['read_device', 'write_device'], activeTokenHash: hashSecret(response.refresh_token),
        familyId: grantTokenNames(response.refresh_token)!.familyId,
      });
      expect(items.refreshTokens).toEqual([]);
      expect(JSON.stringify(items)).not.toContain(response.refresh_token);
      expect(JSON.stringify(items)).not.toContain(code);
      expect(items.codes).toEqual([]);
      expect(items.families[0]).toMatchObject({ familyId: grantTokenNames(code)!.familyId, codeHash: hashSecret(code), createdAt: formatTimestamp(START) });
      // The code's TTL and what only its exchange needed are gone.
      expect(items.families[0]).not.toHaveProperty('expiresAt');
      expect(items.families[0]).not.toHaveProperty('redirectUri');
    });

    it('costs exactly two DynamoDB requests: BatchGetItem and UpdateItem', async () => {
      // Prepare
      const { credentials, code } = await seedCode();

      // Act
      await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
    });

    it('accepts a code until the end of its 10 minutes', async () => {
      // Prepare
      const { credentials, code } = await seedCode();
      advance(CODE_TTL_SECONDS - 1);

      // Act
      const response = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      expect(response.token_type).toBe('Bearer');
    });

    it('refuses a forged code that names a real family (its random part not the code\'s), before or after the exchange, and revokes nothing', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();
      const forged = `${code.slice(0, code.lastIndexOf('.'))}.${randomToken()}`;

      // Act
      const beforeExchange = tokens.exchangeCode(credentials, { code: forged, redirectUri: REDIRECT_URI });
      await beforeExchange.catch(() => undefined);
      const issued = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
      requests.reset();
      const afterExchange = tokens.exchangeCode(credentials, { code: forged, redirectUri: REDIRECT_URI });
      await afterExchange.catch(() => undefined);

      // Assess
      await expectInvalidGrant(beforeExchange);
      await expectInvalidGrant(afterExchange);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['active']);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('refuses a code of our shape that names no family, as any unknown code', async () => {
      // Prepare
      const { credentials } = await seedCode();

      // Act
      const exchange = tokens.exchangeCode(credentials, { code: newGrantToken(randomUUID(), randomUUID()), redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('refuses a used code presented by another client of the same user, and revokes nothing of the grant it produced', async () => {
      // Prepare: the user authorized a second application too
      const { credentials, code, stored, issued } = await seedTokens();
      const other = tokenClient();
      await clients.createClient(other);
      await grants.saveConsent({ userId: stored.userId, clientId: other.clientId, scopes: stored.scopes, grantedAt: formatTimestamp(current), grantGeneration: stored.grantGeneration });
      requests.reset();

      // Act
      const exchange = tokens.exchangeCode({ clientId: other.clientId, clientSecret: SECRET, basic: false }, { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('refuses a second exchange of a code and revokes the grant the first one produced', async () => {
      // Prepare
      const { credentials, code } = await seedCode();
      const first = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Act
      const second = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(second);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: first.refresh_token }));
      expect(await familyStatus(String((await codeItem(code))?.familyId))).toBe('revoked');
    });

    it('refuses an expired code and writes nothing', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();
      advance(CODE_TTL_SECONDS + 1);

      // Act
      const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
      await expectNothingWritten(client.clientId, code);
    });

    it('refuses a code that does not exist', async () => {
      // Prepare
      const { credentials } = await seedCode();

      // Act
      const exchange = tokens.exchangeCode(credentials, { code: randomToken(), redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
    });

    it.each([
      ['a wrong client secret', (c: ClientCredentials) => ({ ...c, clientSecret: `${SECRET}x` })],
      ['an empty client secret', (c: ClientCredentials) => ({ ...c, clientSecret: '' })],
      ['an unknown client', (c: ClientCredentials) => ({ ...c, clientId: `unknown-${randomUUID()}` })],
    ])('answers invalid_client (401) for %s and writes nothing', async (_, change) => {
      // Prepare
      const { client, credentials, code } = await seedCode();

      // Act
      const exchange = tokens.exchangeCode(change(credentials), { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectOAuthError(exchange, InvalidClientError, 'invalid_client', 401);
      await expectNothingWritten(client.clientId, code);
    });

    it('sends a Basic challenge with invalid_client whichever way the client sent its credentials (RFC 9110 §15.5.2)', async () => {
      // Prepare
      const { credentials, code } = await seedCode();
      const wrong = { ...credentials, clientSecret: 'wrong' };

      // Act
      const [post, basic] = await Promise.all([
        tokens.exchangeCode(wrong, { code, redirectUri: REDIRECT_URI }).catch((e: AppError) => e),
        tokens.exchangeCode({ ...wrong, basic: true }, { code, redirectUri: REDIRECT_URI }).catch((e: AppError) => e),
      ]);

      // Assess
      expect(post).toBeInstanceOf(InvalidClientError);
      expect((post as AppError).headers).toEqual({ 'www-authenticate': 'Basic realm="oauth"' });
      expect((basic as AppError).headers).toEqual({ 'www-authenticate': 'Basic realm="oauth"' });
    });

    it.each([
      ['another registered path', 'https://app.example.test/other'],
      ['a trailing slash', `${REDIRECT_URI}/`],
      ['an added query', `${REDIRECT_URI}?x=1`],
      ['no redirect_uri at all', ''],
    ])('refuses a redirect_uri that differs from the request (%s) and writes nothing', async (_, redirectUri) => {
      // Prepare
      const { client, credentials, code } = await seedCode({ client: { redirectUris: [REDIRECT_URI, 'https://app.example.test/other'] } });

      // Act
      const exchange = tokens.exchangeCode(credentials, { code, redirectUri });

      // Assess
      await expectInvalidGrant(exchange);
      await expectNothingWritten(client.clientId, code);
    });

    it('refuses a code issued to another client, even one that authenticates correctly', async () => {
      // Prepare
      const { client, code } = await seedCode();
      const other = tokenClient();
      await clients.createClient(other);

      // Act
      const exchange = tokens.exchangeCode({ clientId: other.clientId, clientSecret: SECRET, basic: false }, { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
      await expectNothingWritten(client.clientId, code);
      expect((await itemsOf(other.clientId)).families).toEqual([]);
    });

    describe('with PKCE', () => {
      it('accepts the S256 verifier of the challenge', async () => {
        // Prepare
        const pkce = pkcePair();
        const { credentials, code } = await seedCode({ code: { codeChallenge: pkce.challenge } });

        // Act
        const response = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI, codeVerifier: pkce.verifier });

        // Assess
        expect(response.refresh_token).toEqual(expect.any(String));
      });

      it('matches the RFC 7636 appendix B example', async () => {
        // Prepare
        const { credentials, code } = await seedCode({ code: { codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' } });

        // Act
        const response = await tokens.exchangeCode(credentials, {
          code, redirectUri: REDIRECT_URI, codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        });

        // Assess
        expect(response.token_type).toBe('Bearer');
      });

      it.each([
        ['a wrong verifier', { challenge: true, verifier: 'wrong' as const }],
        ['a verifier without a challenge', { challenge: false, verifier: 'right' as const }],
        ['a challenge without a verifier', { challenge: true, verifier: undefined }],
      ])('refuses %s and writes nothing', async (_, shape) => {
        // Prepare
        const pkce = pkcePair();
        const { client, credentials, code } = await seedCode({ code: shape.challenge ? { codeChallenge: pkce.challenge } : {} });
        const codeVerifier = shape.verifier === 'right' ? pkce.verifier : shape.verifier === 'wrong' ? pkcePair().verifier : undefined;

        // Act
        const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI, codeVerifier });

        // Assess
        await expectInvalidGrant(exchange);
        await expectNothingWritten(client.clientId, code);
      });

      it('refuses a verifier that matches its challenge but is not RFC 7636 shaped (too short)', async () => {
        // Prepare
        const verifier = 'short-verifier';
        const { client, credentials, code } = await seedCode({ code: { codeChallenge: hashSecret(verifier) } });

        // Act
        const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

        // Assess
        await expectInvalidGrant(exchange);
        await expectNothingWritten(client.clientId, code);
      });
    });

    it('lets exactly one of 50 simultaneous exchanges of a code succeed', async () => {
      // Prepare
      const { credentials, code } = await seedCode();

      // Act
      const results = await Promise.allSettled(Array.from({ length: 50 }, () =>
        tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })));

      // Assess
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(fulfilled).toHaveLength(1);
      expect(rejected).toHaveLength(49);
      for (const reason of rejected) expect(reason).toBeInstanceOf(InvalidGrantError);
    });
  });

  describe('mutants that survived the suite', () => {
    it('the loser of a code-replay race revokes the grant the winner got (RFC 6749 §4.1.2)', async () => {
      // Prepare: the loser reads the unused code; the winner exchanges it before the loser writes
      const { client, credentials, code } = await seedCode();
      let winner: TokenResponse | undefined;
      const name = 'winner-first';
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && winner === undefined) {
          winner = {} as TokenResponse;
          winner = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
        }
        return next(args);
      }, { step: 'initialize', name });

      // Act
      let loser: Promise<TokenResponse>;
      try {
        loser = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
        await loser.catch(() => undefined);
      } finally {
        doc.middlewareStack.remove(name);
      }

      // Assess
      await expectInvalidGrant(loser);
      expect(winner?.refresh_token).toEqual(expect.any(String));
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: winner!.refresh_token }));
      expect((await itemsOf(client.clientId)).families.map((f) => [f.status, f.revokedReason])).toEqual([['revoked', 'code_replay']]);
    });

    it('a code revoked while pending (a revocation of the application found it) can no longer be exchanged; nothing more is written', async () => {
      // Prepare
      const { credentials, code } = await seedCode();
      await grants.revokeFamily(grantTokenNames(code)!.familyId, current, 'user_revoked');
      requests.reset();

      // Act
      const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      // Assess
      await expectInvalidGrant(exchange);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      const item = await codeItem(code);
      expect(item).toMatchObject({ status: 'revoked', revokedReason: 'user_revoked', expiresAt: epochSeconds(START) + CODE_TTL_SECONDS });
      expect(item).not.toHaveProperty('activeTokenHash');
    });

    it('lets one of 50 simultaneous exchanges win, and the replays revoke its grant', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();

      // Act
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })));

      // Assess
      const fulfilled = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(fulfilled.length).toBeLessThanOrEqual(1);
      for (const issued of fulfilled) await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
      expect((await itemsOf(client.clientId)).families.every((f) => f.status === 'revoked')).toBe(true);
    });

    it('a code issued by the authorization endpoint lives exactly 600 seconds (10 minutes)', async () => {
      // Prepare: two codes issued now, as GET /oauth/authorize issues them
      const client = tokenClient();
      await clients.createClient(client);
      const consent = { userId: randomUUID(), clientId: client.clientId, scopes: ['read_user'], grantedAt: formatTimestamp(START), grantGeneration: randomUUID() };
      await grants.saveConsent(consent);
      const request = { clientId: client.clientId, redirectUri: REDIRECT_URI, state: 'xyz', scopes: ['read_user'] };
      const before = epochSeconds(new Date());
      const codes = await Promise.all([1, 2].map(async () => new URL((await issueCode(grants, request, ISSUER, consent))!).searchParams.get('code')!));
      const after = epochSeconds(new Date());
      const credentials: ClientCredentials = { clientId: client.clientId, clientSecret: SECRET, basic: false };

      // Act
      setClock(new Date((before + 599) * 1000));
      const early = await tokens.exchangeCode(credentials, { code: codes[0]!, redirectUri: REDIRECT_URI });
      setClock(new Date((after + 600) * 1000));
      const late = tokens.exchangeCode(credentials, { code: codes[1]!, redirectUri: REDIRECT_URI });

      // Assess
      expect(early.token_type).toBe('Bearer');
      await expectInvalidGrant(late);
      const expiresAt = Number((await codeItem(codes[1]!))?.expiresAt);
      expect(expiresAt - before).toBeGreaterThanOrEqual(600);
      expect(expiresAt - after).toBeLessThanOrEqual(600);
    });

    it.each([
      ['an illegal character before a valid 43-character core', (core: string) => `!${core}`],
      ['an illegal character after a valid 43-character core', (core: string) => `${core}!`],
      ['a space before a valid 128-character core', (core: string) => ` ${core.repeat(3).slice(0, 128)}`],
      ['a slash after a valid 128-character core', (core: string) => `${core.repeat(3).slice(0, 128)}/`],
      ['129 valid characters', (core: string) => core.repeat(3).slice(0, 129)],
      ['42 valid characters', (core: string) => core.slice(0, 42)],
    ])('refuses a PKCE verifier with %s, though it matches its challenge, and writes nothing', async (_, shape) => {
      // Prepare
      const verifier = shape(randomToken().slice(0, 43));
      const { client, credentials, code } = await seedCode({ code: { codeChallenge: hashSecret(verifier) } });

      // Act
      const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

      // Assess
      await expectOAuthError(exchange, InvalidGrantError, 'invalid_grant', 400);
      await expectNothingWritten(client.clientId, code);
    });

    it.each([43, 128])('accepts a PKCE verifier of %i valid characters', async (length) => {
      // Prepare
      const verifier = `${randomToken()}${randomToken()}${randomToken()}-._~`.slice(-length);
      const { credentials, code } = await seedCode({ code: { codeChallenge: hashSecret(verifier) } });

      // Act
      const issued = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

      // Assess
      expect(issued.token_type).toBe('Bearer');
    });
  });

  describe('the single-item family, re-measured by mutation (2026-11-23)', () => {
    it('tells the client why each refusal happened (error_description)', async () => {
      const { credentials, code } = await seedCode();
      await expect(tokens.exchangeCode(credentials, { code, redirectUri: `${REDIRECT_URI}/other` }))
        .rejects.toThrow('redirect_uri does not match the authorization request.');
      const pkce = await seedCode({ code: { codeChallenge: pkcePair().challenge } });
      await expect(tokens.exchangeCode(pkce.credentials, { code: pkce.code, redirectUri: REDIRECT_URI, codeVerifier: pkcePair().verifier }))
        .rejects.toThrow('PKCE verification failed.');
      await expect(tokens.exchangeCode(credentials, { code: randomToken(), redirectUri: REDIRECT_URI }))
        .rejects.toThrow('The authorization code is invalid, expired or already used.');

      const { issued } = await seedTokens();
      const seeded = await seedTokens();
      await expect(tokens.refresh(seeded.credentials, { refreshToken: issued.refresh_token }))
        .rejects.toThrow('The refresh token is invalid or has been revoked.');
      await expect(tokens.refresh(seeded.credentials, { refreshToken: seeded.issued.refresh_token, scope: 'read_device admin read_user' }))
        .rejects.toThrow('The refresh token does not grant: admin read_user.');
      await expect(tokens.refresh(seeded.credentials, { refreshToken: seeded.issued.refresh_token, scope: ' ' }))
        .rejects.toThrow('The refresh token does not grant: (empty scope).');
    });

    it('refuses a replayed code and revokes its grant even while signing is unavailable: a replay never waits on the signer', async () => {
      const { credentials, code, issued } = await seedTokens();
      const unsigned = createTokenService({
        grants, signer: () => Promise.reject(new SigningUnavailableError(new Error('kms:Sign throttled'))), issuer: ISSUER, audience: AUDIENCE, now: () => current,
      });

      await expectInvalidGrant(unsigned.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'code_replay' });
    });

    it('refuses a code issued before the user revoked the application, and writes nothing', async () => {
      const { client, credentials, code, stored } = await seedCode();
      await grants.deleteConsent(stored.userId, stored.clientId);
      requests.reset();

      const exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      await expectOAuthError(exchange, InvalidGrantError, 'invalid_grant', 400);
      await expect(exchange).rejects.toThrow('The authorization code is invalid, expired or already used.');
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      await expectNothingWritten(client.clientId, code);
    });

    it('refuses a code deleted (its TTL) while it was being exchanged, and writes nothing', async () => {
      const { client, credentials, code } = await seedCode();
      const name = 'code-deleted';
      let deleted = false;
      doc.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && !deleted) {
          deleted = true;
          await doc.send(new DeleteCommand({ TableName: table, Key: familyKey(grantTokenNames(code)!.familyId) }));
        }
        return next(args);
      }, { step: 'initialize', name });
      let exchange: Promise<TokenResponse>;
      try {
        exchange = tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
        await exchange.catch(() => undefined);
      } finally {
        doc.middlewareStack.remove(name);
      }

      await expectInvalidGrant(exchange);
      expect(await itemsOf(client.clientId)).toEqual({ codes: [], families: [], refreshTokens: [] });
    });

    it('passes a storage failure of the exchange on at once, the code unspent for the retry', async () => {
      const { client, credentials, code } = await seedCode();

      const outcome = await withFailure('UpdateItemCommand', throttled, () => tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
      expect(operationsOf('UpdateItemCommand')).toBe(1);
      await expectNothingWritten(client.clientId, code);
      expect((await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })).refresh_token).toEqual(expect.any(String));
    });

    it('tries an exchange that keeps meeting a revocation in flight 4 times, then gives up without spending the code', async () => {
      const { client, credentials, code } = await seedCode();
      const conflict = () => Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });

      const outcome = await withFailure('UpdateItemCommand', conflict, () => tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      expect(outcome).toMatchObject({ status: 'rejected', reason: { name: 'GrantWriteError', reason: 'conflict' } });
      expect(requests.operations).toEqual(['BatchGetItemCommand', ...Array<string>(4).fill('UpdateItemCommand')]);
      await expectNothingWritten(client.clientId, code);
      // One conflict, then the way is clear: the same exchange succeeds.
      const retried = await withFailure('UpdateItemCommand', conflict, () => tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }), 1);
      expect(retried).toMatchObject({ status: 'fulfilled', value: { refresh_token: expect.any(String) } });
    });
  });
});
