import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand } from '#shared/data/commands';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_TTL_SECONDS } from '#shared/oauth/authorize-request';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { CLIENT_CACHE_SECONDS, createClientCache } from '#shared/oauth/client-cache';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { createLocalSigner } from '#shared/keys/local-signer';
import { hashSecret } from '#shared/secrets';
import { SigningUnavailableError } from '#shared/keys/signer';
import { createTokenService, type TokenService } from '#shared/oauth/token-service';
import { clientKey } from '#shared/data/item-keys';
import type { Client } from '#shared/domain/client';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { InvalidClientError } from '#shared/errors';
import { useRepoTable } from '../support/repos';

// The token endpoint's cache of client items (shared/oauth/client-cache.ts; docs/design.md, "Client
// items at the token endpoint"), on DynamoDB Local: what each call reads, and what a cached item
// may and may not let through. The cache's clock is the test's; the service's clock is the time of
// the grants (in the future: DynamoDB Local deletes items past their TTL).

const START = new Date('2046-03-01T10:00:00.000Z');
const REDIRECT_URI = 'https://app.example.test/callback';
const SECRET = 'client-secret-that-is-long-enough-0123456789abcdef';
const NEW_SECRET = 'the-secret-after-a-rotation-0123456789abcdefghijk';

describe('token service with the client cache', () => {
  const { doc, table, repos: { clients, grants }, requests } = useRepoTable({ keepInputs: true });
  let keyDir: string;
  let tokens: TokenService;
  let cacheNow: number;
  /** The partition keys of each BatchGetItem sent since the last reset, in order. */
  const batchReads = () => requests.operations.flatMap((operation, i) => (operation.startsWith('BatchGet')
    ? [(requests.inputs[i] as { RequestItems: Record<string, { Keys: { pk: string }[] }> }).RequestItems[table]!.Keys.map((key) => key.pk)]
    : []));

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'dus-client-cache-'));
    const signer = createLocalSigner(join(keyDir, 'signing-key.pem'));
    tokens = createTokenService({
      grants, signer: Promise.resolve(signer), issuer: 'https://auth.example.test', audience: 'https://api.example.test',
      now: () => START, clientCache: createClientCache({ now: () => cacheNow }),
    });
  });
  afterAll(() => {
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    cacheNow = 1_000_000;
    requests.reset();
  });

  /** A client with a consent, a code and its first refresh token; the exchange fills the cache. */
  async function seedTokens() {
    const client: Client = {
      clientId: `client-${randomUUID()}`, secretHash: hashSecret(SECRET), name: 'Test application', description: 'A client of the cache tests.',
      website: 'https://app.example.test', redirectUris: [REDIRECT_URI], developerId: randomUUID(), developerName: 'Test Developer',
      createdAt: '2026-01-01T00:00:00.000',
    };
    await clients.createClient(client);
    const { code, stored } = newAuthorizationCode({
      clientId: client.clientId, userId: randomUUID(), redirectUri: REDIRECT_URI, scopes: ['read_device'],
      expiresAt: epochSeconds(START) + CODE_TTL_SECONDS, grantGeneration: randomUUID(),
    });
    await grants.saveConsent({ userId: stored.userId, clientId: client.clientId, scopes: stored.scopes, grantedAt: formatTimestamp(START), grantGeneration: stored.grantGeneration });
    await grants.createCode(stored);
    const credentials: ClientCredentials = { clientId: client.clientId, clientSecret: SECRET, basic: false };
    const issued = await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
    const familyId = stored.familyId;
    requests.reset();
    return { client, credentials, familyId, refreshToken: issued.refresh_token };
  }

  /** Whether each BatchGetItem since the last reset read the client item. */
  const clientRead = (client: Client) => batchReads().map((pks) => pks.includes(clientKey(client.clientId).pk));

  async function refusal(promise: Promise<unknown>) {
    return promise.then(() => 'accepted', (error: unknown) => (error instanceof InvalidClientError ? 'invalid_client' : String(error)));
  }

  it(`leaves the client out of the read for ${CLIENT_CACHE_SECONDS} s after reading it, for calls with its current secret; then reads it again`, async () => {
    // Prepare
    const { client, credentials, refreshToken } = await seedTokens();

    // Act
    const first = await tokens.refresh(credentials, { refreshToken });
    cacheNow += CLIENT_CACHE_SECONDS * 1000 - 1;
    const second = await tokens.refresh(credentials, { refreshToken: first.refresh_token });
    cacheNow += 1;
    const third = await tokens.refresh(credentials, { refreshToken: second.refresh_token });
    const fourth = await tokens.refresh(credentials, { refreshToken: third.refresh_token });

    // Assess
    expect(CLIENT_CACHE_SECONDS).toBe(5);
    expect(clientRead(client)).toEqual([false, false, true, false]);
    // Without the client, the read is the family and the consent.
    expect(batchReads()[0]).toHaveLength(2);
    expect(fourth.refresh_token).toEqual(expect.any(String));
  });

  it('reads the client for a wrong secret every time, and refuses it', async () => {
    // Prepare
    const { client, credentials, refreshToken } = await seedTokens();
    const wrong = { ...credentials, clientSecret: 'not-the-secret-of-this-client-0123456789abcdefgh' };

    // Act
    const outcomes = [await refusal(tokens.refresh(wrong, { refreshToken })), await refusal(tokens.refresh(wrong, { refreshToken }))];

    // Assess
    expect(outcomes).toEqual(['invalid_client', 'invalid_client']);
    expect(clientRead(client)).toEqual([true, true]);
  });

  it('takes a new secret at once after a rotation, never takes a previous secret from the cache, and refuses it at once when retired', async () => {
    // Prepare: the cache holds the item from before the rotation
    const { client, credentials, refreshToken } = await seedTokens();
    await clients.updateClient(client.developerId, client.clientId, {
      secretHash: hashSecret(NEW_SECRET), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START),
    });
    const rotated = { ...credentials, clientSecret: NEW_SECRET };

    // Act
    const withNew = await tokens.refresh(rotated, { refreshToken });
    const withPrevious = await tokens.refresh(credentials, { refreshToken: withNew.refresh_token });
    await clients.retirePreviousSecret(client.developerId, client.clientId);
    const retired = await refusal(tokens.refresh(credentials, { refreshToken: withPrevious.refresh_token }));
    const withNewAgain = await tokens.refresh(rotated, { refreshToken: withPrevious.refresh_token });

    // Assess: the new secret did not match the cached item (read); the previous one matched the new item's previous secret (read)
    expect(withNew.refresh_token).toEqual(expect.any(String));
    expect(retired).toBe('invalid_client');
    expect(withNewAgain.refresh_token).toEqual(expect.any(String));
    expect(clientRead(client)).toEqual([true, true, true, false]);
  });

  it(`lets a secret that stopped being current within the last ${CLIENT_CACHE_SECONDS} s through on an instance that cached it, and no longer after`, async () => {
    // Prepare: rotated and retired at once, while this instance's item still names SECRET as current
    const { client, credentials, refreshToken } = await seedTokens();
    await clients.updateClient(client.developerId, client.clientId, { secretHash: hashSecret(NEW_SECRET), secretCreatedAt: formatTimestamp(START) });

    // Act
    const withinWindow = await tokens.refresh(credentials, { refreshToken });
    cacheNow += CLIENT_CACHE_SECONDS * 1000;
    const afterWindow = await refusal(tokens.refresh(credentials, { refreshToken: withinWindow.refresh_token }));

    // Assess: the documented window (docs/design.md), and its end
    expect(withinWindow.refresh_token).toEqual(expect.any(String));
    expect(afterWindow).toBe('invalid_client');
    expect(clientRead(client)).toEqual([false, true]);
  });

  it('does not read the client again when a grant authenticated from the cache fails otherwise (signing unavailable: 503)', async () => {
    // Prepare: a token service whose signer is down, with the client's item kept
    const { client, credentials, refreshToken } = await seedTokens();
    const cache = createClientCache({ now: () => cacheNow });
    cache.remember((await clients.getClient(client.clientId))!);
    const down = createTokenService({
      grants, issuer: 'https://auth.example.test', audience: 'https://api.example.test', now: () => START, clientCache: cache,
      signer: () => Promise.reject(new SigningUnavailableError(new Error('KMS throttled'))),
    });
    requests.reset();

    // Act
    const failure = await down.refresh(credentials, { refreshToken }).then(() => undefined, (error: unknown) => error);

    // Assess: one read, of the family and the consent
    expect(failure).toBeInstanceOf(SigningUnavailableError);
    expect(batchReads()).toEqual([[expect.stringMatching(/^FAMILY#/), expect.any(String)]]);
  });

  it('answers invalid_client for a deleted application whose item is cached: a refused grant reads the client again', async () => {
    // Prepare: the application deleted and its family revoked, as the developer console does, after the cache read it
    const { client, credentials, familyId, refreshToken } = await seedTokens();
    await doc.send(new DeleteCommand({ TableName: table, Key: clientKey(client.clientId) }));
    await grants.revokeFamily(familyId, START, 'user_revoked');

    // Act
    const refused = await refusal(tokens.refresh(credentials, { refreshToken }));
    const again = await refusal(tokens.refresh(credentials, { refreshToken }));

    // Assess: the first call read the grant without the client, then the client alone; the cache forgot it
    expect(refused).toBe('invalid_client');
    expect(again).toBe('invalid_client');
    expect(batchReads()).toEqual([
      [expect.stringMatching(/^FAMILY#/), expect.any(String)],
      [clientKey(client.clientId).pk],
      [clientKey(client.clientId).pk, expect.stringMatching(/^FAMILY#/), expect.any(String)],
    ]);
  });
});
