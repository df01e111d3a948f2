import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CODE_TTL_SECONDS, issueCode } from '#shared/auth/authorize-request';
import type { ClientCredentials } from '#shared/auth/client-auth';
import { createKmsSigner } from '#shared/auth/kms-signer';
import { createLocalSigner } from '#shared/auth/local-signer';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { SigningUnavailableError, type TokenSigner } from '#shared/auth/signer';
import { tokenEndpoint } from '#shared/auth/token-endpoint';
import { grantTokenNames, newAuthorizationCode, newGrantToken, type CodeGrant } from '#shared/auth/grant-tokens';
import { createTokenService, REFRESH_GRACE_SECONDS, type TokenResponse, type TokenService } from '#shared/auth/token-service';
import { createClientRepo, type ClientRepo } from '#shared/data/client-repo';
import { createGrantRepo, type GrantRepo } from '#shared/data/grant-repo';
import { familyKey } from '#shared/data/keys';
import { PREVIOUS_SECRET_OVERLAP_SECONDS, type Client } from '#shared/domain/client';
import { REVOKED_GRANT_SECONDS } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { AppError, InvalidClientError, InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { toAppError } from '#shared/http/http';
import { lambdaContext } from '#local/lambda-context';
import { countRequests } from '../support/count-requests';
import { withFailure as injectFailure } from '../support/inject-failure';
import { createFakeKms } from '../support/fake-kms';
import { freshTable } from '../support/service';

const ISSUER = 'https://auth.example.test';
const AUDIENCE = 'https://api.example.test';
// In the future: DynamoDB Local deletes items past their TTL (`expiresAt`) as DynamoDB does, so a
// code stamped by a clock in the past could vanish while a test exchanges it.
const START = new Date('2046-03-01T10:00:00.000Z');
const REDIRECT_URI = 'https://app.example.test/callback';
const SECRET = 'client-secret-that-is-long-enough-0123456789abcdef';

function makeClient(overrides: Partial<Client> = {}): Client {
  return {
    clientId: `client-${randomUUID()}`,
    secretHash: hashSecret(SECRET),
    name: 'Test application',
    description: 'An application of the token service tests.',
    website: 'https://app.example.test',
    redirectUris: [REDIRECT_URI],
    developerId: randomUUID(),
    developerName: 'Test Developer',
    createdAt: '2026-01-01T00:00:00.000',
    ...overrides,
  };
}

/** What a code is issued for (newAuthorizationCode adds its family, hash and status). */
function makeCode(clientId: string, now: Date, overrides: Partial<CodeGrant> = {}): CodeGrant {
  return {
    clientId,
    userId: randomUUID(),
    redirectUri: REDIRECT_URI,
    scopes: ['read_device', 'write_device'],
    expiresAt: epochSeconds(now) + CODE_TTL_SECONDS,
    grantGeneration: randomUUID(),
    ...overrides,
  };
}

/** A PKCE pair (RFC 7636, S256). */
function pkcePair() {
  const verifier = randomToken();
  return { verifier, challenge: hashSecret(verifier) };
}

describe('token service', () => {
  let doc: DynamoDBDocumentClient;
  let table: string;
  let clients: ClientRepo;
  let grants: GrantRepo;
  let signer: TokenSigner;
  let keyDir: string;
  let tokens: TokenService;
  let current: Date;
  let requests: ReturnType<typeof countRequests>;

  beforeAll(async () => {
    ({ doc, table } = await freshTable());
    clients = createClientRepo({ doc, table });
    grants = createGrantRepo({ doc, table });
    keyDir = mkdtempSync(join(tmpdir(), 'dus-token-service-'));
    signer = createLocalSigner(join(keyDir, 'signing-key.pem'));
    tokens = createTokenService({
      grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current,
    });
    requests = countRequests(doc);
  });
  afterAll(() => {
    requests?.detach();
    doc?.destroy();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    current = START;
    requests.reset();
  });

  const advance = (seconds: number) => {
    current = new Date(current.getTime() + seconds * 1000);
  };

  /** A registered client and a code issued to it now; not counted as the test's requests. */
  async function seedCode(options: { client?: Partial<Client>; code?: Partial<CodeGrant> } = {}) {
    const client = makeClient(options.client);
    await clients.createClient(client);
    const { code, stored } = newAuthorizationCode(makeCode(client.clientId, current, options.code));
    await grants.saveConsent({
      userId: stored.userId, clientId: client.clientId, scopes: stored.scopes, grantedAt: formatTimestamp(current), grantGeneration: stored.grantGeneration,
    });
    await grants.createCode(stored);
    requests.reset();
    const credentials: ClientCredentials = { clientId: client.clientId, clientSecret: SECRET, basic: false };
    return { client, credentials, code, stored };
  }

  /** A code exchanged for a first token response. */
  async function seedTokens(options: Parameters<typeof seedCode>[0] = {}) {
    const seeded = await seedCode(options);
    const issued = await tokens.exchangeCode(seeded.credentials, { code: seeded.code, redirectUri: REDIRECT_URI });
    requests.reset();
    return { ...seeded, issued };
  }

  /** Every item the table holds for a client, read without the repositories, by key prefix. */
  async function itemsOf(clientId: string) {
    const { Items = [] } = await doc.send(new ScanCommand({
      TableName: table,
      FilterExpression: 'clientId = :client',
      ExpressionAttributeValues: { ':client': clientId },
      ConsistentRead: true,
    }));
    requests.reset();
    const withPrefix = (prefix: string) => Items.filter((item) => String(item.pk).startsWith(prefix));
    // A code is its family's item until exchanged (pending).
    const familyItems = withPrefix('FAMILY#');
    return { codes: familyItems.filter((item) => item.status === 'pending'), families: familyItems.filter((item) => item.status !== 'pending'), refreshTokens: withPrefix('RT#') };
  }

  /** The item a code names: the code while pending, then the family it became. */
  async function codeItem(code: string) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(grantTokenNames(code)!.familyId), ConsistentRead: true }));
    requests.reset();
    return Item;
  }

  /** The family item a refresh token names (its id is in the token). */
  async function familyOf(token: string) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(grantTokenNames(token)!.familyId), ConsistentRead: true }));
    requests.reset();
    return Item;
  }

  async function familyStatus(familyId: string) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(familyId), ConsistentRead: true }));
    requests.reset();
    return Item?.status;
  }

  /** Asserts that nothing was issued for the client: the code is still pending, no family, no refresh token. */
  async function expectNothingWritten(clientId: string, code: string) {
    const items = await itemsOf(clientId);
    expect(items.families).toEqual([]);
    expect(items.refreshTokens).toEqual([]);
    const stored = await codeItem(code);
    expect(stored).toMatchObject({ status: 'pending', codeHash: hashSecret(code) });
    expect(stored?.activeTokenHash).toBeUndefined();
  }

  async function expectOAuthError(promise: Promise<unknown>, type: new (...args: never[]) => AppError, code: string, status: number) {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ code, status });
  }

  const expectInvalidGrant = (promise: Promise<unknown>) => expectOAuthError(promise, InvalidGrantError, 'invalid_grant', 400);

  async function verifyAccessToken(token: string) {
    const key = await importJWK(await signer.publicJwk(), 'RS256');
    return jwtVerify(token, key, {
      issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt', algorithms: ['RS256'], currentDate: current,
    });
  }

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
      const other = makeClient();
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

    it('sends a Basic challenge with invalid_client only when the client used HTTP Basic', async () => {
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
      expect((post as AppError).headers).toEqual({});
      expect((basic as AppError).headers['www-authenticate']).toMatch(/^Basic /);
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
      const other = makeClient();
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

    it('rotates in the family item alone: the successor current, the presented token previous, the successor sealed for the grace window, no TTL', async () => {
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

    it('gives a retry of the old token within the grace window the same successor', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(REFRESH_GRACE_SECONDS);

      // Act
      const retry = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      expect(retry.refresh_token).toBe(rotated.refresh_token);
      expect((await verifyAccessToken(retry.access_token)).payload.iat).toBe(epochSeconds(current));
      const next = await tokens.refresh(credentials, { refreshToken: retry.refresh_token });
      expect(next.refresh_token).not.toBe(rotated.refresh_token);
    });

    it('treats the old token after the grace window as reuse: refused, and the whole family revoked', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      current = new Date(current.getTime() + REFRESH_GRACE_SECONDS * 1000 + 1);

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: rotated.refresh_token }));
    });

    it('treats the old token as reuse once its successor has been used, even within the grace window', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const third = await tokens.refresh(credentials, { refreshToken: rotated.refresh_token });
      advance(1);

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
      const other = makeClient();
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

    it('revokes the family when a token rotated by concurrent refreshes is reused after the grace window', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const results = await Promise.all(Array.from({ length: 50 }, () =>
        tokens.refresh(credentials, { refreshToken: issued.refresh_token })));
      const successor = results[0]!.refresh_token;
      advance(REFRESH_GRACE_SECONDS + 1);

      // Act
      const reuse = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectInvalidGrant(reuse);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: successor }));
    });
  });

  describe('when kms:Sign fails', () => {
    // The token service as in AWS: createKmsSigner over a KMS stand-in that signs for real and can
    // be told to throttle (or deny) the next kms:Sign calls.
    let fake: ReturnType<typeof createFakeKms>;
    let kmsSigner: TokenSigner;
    let kmsTokens: TokenService;
    let endpoint: ReturnType<typeof tokenEndpoint>;

    beforeAll(() => {
      fake = createFakeKms();
      kmsSigner = createKmsSigner(fake.kms, 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
      kmsTokens = createTokenService({
        grants, signer: Promise.resolve(kmsSigner), issuer: ISSUER, audience: AUDIENCE, now: () => current,
      });
      endpoint = tokenEndpoint(kmsTokens);
    });
    beforeEach(() => {
      fake.failSign(0);
    });

    const failure = (promise: Promise<unknown>) => promise.then(() => {
      throw new Error('expected the call to fail');
    }, (error: unknown) => error);

    async function verifyKmsToken(token: string) {
      const key = await importJWK(await kmsSigner.publicJwk(), 'RS256');
      return jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt', currentDate: current });
    }


    /** The token endpoint's answer to a form, invoked as Lambda invokes it. */
    async function post(fields: Record<string, string>) {
      const result = await endpoint({
        version: '2.0',
        routeKey: 'POST /oauth/token',
        rawPath: '/oauth/token',
        rawQueryString: '',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        requestContext: {
          accountId: '123456789012', apiId: 'auth', domainName: 'auth.example.test', domainPrefix: 'auth',
          http: { method: 'POST', path: '/oauth/token', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
          requestId: randomUUID(), routeKey: 'POST /oauth/token', stage: '$default', time: '01/Mar/2026:10:00:00 +0000', timeEpoch: 0,
        },
        body: new URLSearchParams(fields).toString(),
        isBase64Encoded: false,
      }, lambdaContext('post-token', randomUUID()));
      return { status: result.statusCode, headers: result.headers, body: JSON.parse(String(result.body)) as Record<string, unknown> };
    }

    it('answers a throttled code exchange with 503, writes nothing, and exchanges the same code on retry', async () => {
      // Prepare
      const { client, credentials, code, stored } = await seedCode();
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      expect(toAppError(error)).toMatchObject({ status: 503, code: 'temporarily_unavailable', headers: { 'retry-after': '1' } });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      await expectNothingWritten(client.clientId, code);

      const retry = await kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
      expect((await verifyKmsToken(retry.access_token)).payload).toMatchObject({ sub: stored.userId, client_id: client.clientId });
      const items = await itemsOf(client.clientId);
      expect(items.families).toHaveLength(1);
      expect(items.families[0]).toMatchObject({ status: 'active', activeTokenHash: hashSecret(retry.refresh_token) });
      expect(items.families[0]!.familyId).toBe(grantTokenNames(code)!.familyId);
      expect((await kmsTokens.refresh(credentials, { refreshToken: retry.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers a throttled refresh with 503, leaves the token unrotated, and rotates the same token on a later retry', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      expect(toAppError(error)).toMatchObject({ status: 503, code: 'temporarily_unavailable' });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      const family = await familyOf(issued.refresh_token);
      expect(family).toMatchObject({ status: 'active', activeTokenHash: hashSecret(issued.refresh_token) });
      expect(family?.previousTokenHash).toBeUndefined();

      // A retry after the grace window: an already rotated token would count as reuse here.
      advance(REFRESH_GRACE_SECONDS + 1);
      const retry = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      expect(retry.refresh_token).not.toBe(issued.refresh_token);
      await verifyKmsToken(retry.access_token);
      const items = await itemsOf(client.clientId);
      expect(items.families.map((f) => f.status)).toEqual(['active']);
      expect(items.families[0]).toMatchObject({ activeTokenHash: hashSecret(retry.refresh_token), previousTokenHash: hashSecret(issued.refresh_token) });
      expect((await kmsTokens.refresh(credentials, { refreshToken: retry.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers a throttled grace-window retry with 503 and gives the next retry the same successor', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      const rotated = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(1);
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      const retry = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      expect(retry.refresh_token).toBe(rotated.refresh_token);
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['active']);
    });

    it('answers a denied kms:Sign with a 500 and spends neither the code nor the refresh token', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();
      fake.failSign(1, 'AccessDeniedException');

      // Act
      const error = await failure(kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      // Assess
      expect(error).not.toBeInstanceOf(AppError);
      expect(error).toMatchObject({ cause: { name: 'AccessDeniedException' } });
      expect(toAppError(error)).toMatchObject({ status: 500, code: 'server_error' });
      await expectNothingWritten(client.clientId, code);
      const issued = await kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      fake.failSign(1, 'DisabledException');
      const refreshError = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));
      expect(toAppError(refreshError)).toMatchObject({ status: 500, code: 'server_error' });
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active', activeTokenHash: hashSecret(issued.refresh_token) });
      advance(REFRESH_GRACE_SECONDS + 1);
      expect((await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['active']);
    });

    it('lets exactly one of 20 simultaneous exchanges of a code win, and the replays revoke its grant', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();

      // Act
      const results = await Promise.allSettled(Array.from({ length: 20 }, () =>
        kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })));

      // Assess
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      expect(fulfilled).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(InvalidGrantError);
      // The losers' replays revoke what the winner got (RFC 6749 §4.1.2), as without KMS.
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['revoked']);
    });

    describe('the token endpoint', () => {
      it('answers 503 temporarily_unavailable with Retry-After and no-store, and the same code works on retry', async () => {
        // Prepare
        const { client, code } = await seedCode();
        const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1);

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(503);
        expect(reply.body).toEqual({ error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; retry later.' });
        expect(reply.headers).toMatchObject({
          'retry-after': '1', 'cache-control': 'no-store', pragma: 'no-cache', 'content-type': 'application/json; charset=utf-8',
        });
        const retry = await post(form);
        expect(retry.status).toBe(200);
        expect(retry.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
      });

      it('answers 503 for a throttled refresh, and the same refresh token works on retry', async () => {
        // Prepare
        const { client, issued } = await seedTokens();
        const form = { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1);

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(503);
        expect(reply.body.error).toBe('temporarily_unavailable');
        expect(reply.headers).toMatchObject({ 'retry-after': '1', 'cache-control': 'no-store' });
        advance(REFRESH_GRACE_SECONDS + 1);
        expect((await post(form)).status).toBe(200);
      });

      it('answers a denied kms:Sign with 500 server_error and nothing of KMS in the body', async () => {
        // Prepare
        const { client, code } = await seedCode();
        const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1, 'AccessDeniedException');

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(500);
        expect(reply.body).toEqual({ error: 'server_error', error_description: 'An unexpected error occurred.' });
        expect(reply.headers['cache-control']).toBe('no-store');
        expect(reply.headers['retry-after']).toBeUndefined();
        expect((await post(form)).status).toBe(200);
      });
    });
  });

  describe('a previous client secret, after a rotation', () => {
    const CURRENT = 'the-current-secret-after-rotation-0123456789abcdef';
    /** Tokens of a client rotated at START: its current secret is CURRENT, the previous one SECRET (the credentials'). */
    const seedRotated = () =>
      seedTokens({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });

    it(`is accepted by the token and revocation operations until ${PREVIOUS_SECRET_OVERLAP_SECONDS} s (7 days) after the rotation, then is invalid_client`, async () => {
      // Prepare
      const { credentials, issued } = await seedRotated();
      const current = { ...credentials, clientSecret: CURRENT };
      advance(PREVIOUS_SECRET_OVERLAP_SECONDS - 1);

      // Act
      const lastSecond = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      await tokens.revoke(credentials, randomToken());
      advance(1);
      const refresh = tokens.refresh(credentials, { refreshToken: lastSecond.refresh_token });
      const revoke = tokens.revoke(credentials, lastSecond.refresh_token);

      // Assess
      expect(PREVIOUS_SECRET_OVERLAP_SECONDS).toBe(7 * 24 * 3600);
      // Both awaited together: a rejection of the second before the first is checked would be unhandled.
      await Promise.all([
        expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401),
        expectOAuthError(revoke, InvalidClientError, 'invalid_client', 401),
      ]);
      expect((await tokens.refresh(current, { refreshToken: lastSecond.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('is refused at once when retired, while the current secret works', async () => {
      // Prepare
      const { client, credentials, issued } = await seedRotated();

      // Act
      await clients.retirePreviousSecret(client.developerId, client.clientId);
      const refresh = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401);
      expect((await tokens.refresh({ ...credentials, clientSecret: CURRENT }, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('exchanges a code with either secret, and neither opens the door to a wrong one', async () => {
      // Prepare
      const first = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });
      const second = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });
      const third = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });

      // Act
      const withPrevious = await tokens.exchangeCode({ ...first.credentials, basic: true }, { code: first.code, redirectUri: REDIRECT_URI });
      const withCurrent = await tokens.exchangeCode({ ...second.credentials, clientSecret: CURRENT }, { code: second.code, redirectUri: REDIRECT_URI });
      const wrong = tokens.exchangeCode({ ...third.credentials, clientSecret: 'no-such-client' }, { code: third.code, redirectUri: REDIRECT_URI });

      // Assess
      expect(withPrevious.refresh_token).toEqual(expect.any(String));
      expect(withCurrent.refresh_token).toEqual(expect.any(String));
      await expectOAuthError(wrong, InvalidClientError, 'invalid_client', 401);
      await expectNothingWritten(third.client.clientId, third.code);
    });
  });

  describe('revoke', () => {
    it('revokes the family of a refresh token: neither it nor its successors work afterwards', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Act
      await tokens.revoke(credentials, rotated.refresh_token);

      // Assess
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: rotated.refresh_token }));
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
    });

    it('revokes a current token with one UpdateItem of its family after the read, and gives the family a TTL of 30 days', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();

      // Act
      await tokens.revoke(credentials, issued.refresh_token);

      // Assess
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      const items = await itemsOf(client.clientId);
      expect(items.families).toEqual([expect.objectContaining({ status: 'revoked', expiresAt: epochSeconds(current) + REVOKED_GRANT_SECONDS })]);
      expect(items.refreshTokens).toEqual([]);
    });

    it('revoking through a rotated token, however old, revokes the family, and the current token with it', async () => {
      // Prepare: first → second → third; the first's successor (second) is no longer current
      const { client, credentials, issued } = await seedTokens();
      const second = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const third = await tokens.refresh(credentials, { refreshToken: second.refresh_token });
      advance(400 * 24 * 3600);

      // Act
      await tokens.revoke(credentials, issued.refresh_token);

      // Assess
      expect(await familyOf(third.refresh_token)).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(current) + REVOKED_GRANT_SECONDS });
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
      expect((await itemsOf(client.clientId)).families).toHaveLength(1);
    });

    it('accepts an access token or an unknown token and changes nothing', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      await tokens.revoke(credentials, issued.access_token);
      await tokens.revoke(credentials, randomToken());
      // A token of our shape naming the family under another user: no family of that user.
      await tokens.revoke(credentials, issued.refresh_token.replace(/^[^.]+/, randomUUID()));

      // Assess
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers invalid_client for a wrong secret and keeps the token usable', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      const revoke = tokens.revoke({ ...credentials, clientSecret: 'wrong' }, issued.refresh_token);

      // Assess
      await expectOAuthError(revoke, InvalidClientError, 'invalid_client', 401);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it("leaves another client's refresh token alone", async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const other = makeClient();
      await clients.createClient(other);

      // Act
      await tokens.revoke({ clientId: other.clientId, clientSecret: SECRET, basic: false }, issued.refresh_token);

      // Assess
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });
  });
  describe('mutants that survived the suite (issue 12, item 13)', () => {
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

    it('a grace-window retry with a narrower scope gets an access token of that scope only, and the same successor (RFC 6749 §6)', async () => {
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

    it('a grace-window retry asking for a scope beyond the grant is invalid_scope and gets no successor', async () => {
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

    it('a code issued by the authorization endpoint lives exactly 600 seconds (10 minutes)', async () => {
      // Prepare: two codes issued now, as GET /oauth/authorize issues them
      const client = makeClient();
      await clients.createClient(client);
      const consent = { userId: randomUUID(), clientId: client.clientId, scopes: ['read_user'], grantedAt: formatTimestamp(START), grantGeneration: randomUUID() };
      await grants.saveConsent(consent);
      const request = { clientId: client.clientId, redirectUri: REDIRECT_URI, state: 'xyz', scopes: ['read_user'] };
      const before = epochSeconds(new Date());
      const codes = await Promise.all([1, 2].map(async () => new URL((await issueCode(grants, request, ISSUER, consent))!).searchParams.get('code')!));
      const after = epochSeconds(new Date());
      const credentials: ClientCredentials = { clientId: client.clientId, clientSecret: SECRET, basic: false };

      // Act
      current = new Date((before + 599) * 1000);
      const early = await tokens.exchangeCode(credentials, { code: codes[0]!, redirectUri: REDIRECT_URI });
      current = new Date((after + 600) * 1000);
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

    it('revokeFamily is one UpdateItem, idempotent (the first TTL stays), and no error for a family that does not exist (nothing written)', async () => {
      // Prepare
      const { client, issued } = await seedTokens();
      const { familyId } = grantTokenNames(issued.refresh_token)!;
      const missing = randomUUID();

      // Act
      await grants.revokeFamily(familyId, current, 'token_revoked');
      const first = await familyOf(issued.refresh_token);
      advance(3600);
      await grants.revokeFamily(familyId, current, 'token_revoked');
      await grants.revokeFamily(missing, current, 'token_revoked');

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
      expect(first).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(START) + REVOKED_GRANT_SECONDS });
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(START) + REVOKED_GRANT_SECONDS });
      expect(await familyStatus(missing)).toBeUndefined();
      expect((await itemsOf(client.clientId)).families).toHaveLength(1);
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
    const withFailure = <T>(command: string, failure: () => Error, act: () => Promise<T>, times?: number) => injectFailure(doc, command, failure, act, times);
    const throttled = () => Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ProvisionedThroughputExceededException' });
    const operationsOf = (name: string) => requests.operations.filter((operation) => operation === name).length;

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

    it("records why each grant ended, for the application's grant.revoked event", async () => {
      // A replayed code, a reused refresh token, RFC 7009, and a consent gone that the revocation's Query missed.
      const replayed = await seedTokens();
      await expectInvalidGrant(tokens.exchangeCode(replayed.credentials, { code: replayed.code, redirectUri: REDIRECT_URI }));
      const reused = await seedTokens();
      await tokens.refresh(reused.credentials, { refreshToken: reused.issued.refresh_token });
      advance(REFRESH_GRACE_SECONDS + 1);
      await expectInvalidGrant(tokens.refresh(reused.credentials, { refreshToken: reused.issued.refresh_token }));
      const revoked = await seedTokens();
      await tokens.revoke(revoked.credentials, revoked.issued.refresh_token);
      const abandoned = await seedTokens();
      await grants.deleteConsent(abandoned.stored.userId, abandoned.stored.clientId);
      await expectInvalidGrant(tokens.refresh(abandoned.credentials, { refreshToken: abandoned.issued.refresh_token }));

      const reasons = await Promise.all([replayed, reused, revoked, abandoned].map(async ({ issued }) => (await familyOf(issued.refresh_token))?.revokedReason));
      expect(reasons).toEqual(['code_replay', 'refresh_token_reuse', 'token_revoked', 'user_revoked']);
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

    it('refuses a code issued before the user revoked the application, and writes nothing (issue 12, item 3)', async () => {
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
      await tokens.revoke(credentials, unknown);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });

    it('revoking a token of a family already revoked writes nothing, and keeps the first reason', async () => {
      const { credentials, issued } = await seedTokens();
      await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(REFRESH_GRACE_SECONDS + 1);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
      requests.reset();

      await tokens.revoke(credentials, issued.refresh_token);

      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'refresh_token_reuse' });
    });

    it("counts each token issued and each refresh-token reuse on the operators' dashboard (EMF metrics)", async () => {
      const { credentials, issued } = await seedTokens();
      vi.resetModules();
      vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
      vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
      const out: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { out.push(String(chunk)); return true; });
      try {
        const fresh = await import('#shared/auth/token-service');
        const counted = fresh.createTokenService({ grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current });
        await counted.refresh(credentials, { refreshToken: issued.refresh_token });
        advance(REFRESH_GRACE_SECONDS + 1);
        await counted.refresh(credentials, { refreshToken: issued.refresh_token }).catch(() => undefined);
      } finally {
        vi.restoreAllMocks();
        vi.unstubAllEnvs();
        vi.resetModules();
      }

      const metrics = out.filter((line) => line.includes('"_aws"')).map((line) => Object.keys(JSON.parse(line)).find((name) => /^[A-Z]/.test(name)));
      expect(metrics).toEqual(['TokensIssued', 'RefreshTokenReuse', 'GrantsRevoked']);
    });

    it('does not take a value with something in front of a refresh token for that token: revoking it leaves the family alone', async () => {
      const { credentials, issued } = await seedTokens();

      expect(grantTokenNames(`!${issued.refresh_token}`)).toBeUndefined();
      await tokens.revoke(credentials, `!${issued.refresh_token}`);

      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active' });
    });
  });
});
