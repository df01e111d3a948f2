import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import { importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { CODE_TTL_SECONDS } from '#shared/oauth/authorize-request';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { createLocalSigner } from '#shared/keys/local-signer';
import { hashSecret, randomToken } from '#shared/secrets';
import type { TokenSigner } from '#shared/keys/signer';
import { grantTokenNames, newAuthorizationCode, type CodeGrant } from '#shared/oauth/grant-tokens';
import { createTokenService, type TokenService } from '#shared/oauth/token-service';
import { revokeToken as revokeWithGrants } from '#shared/oauth/revocation';
import { createClientRepo, type ClientRepo } from '#shared/data/client-repo';
import { createGrantRepo, type GrantRepo } from '#shared/data/grant-repo';
import { createDeviceGrantRepo, type DeviceGrantRepo } from '#shared/data/device-grant-repo';
import { familyKey } from '#shared/data/item-keys';
import type { Client } from '#shared/domain/client';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { InvalidGrantError, type AppError } from '#shared/errors';
import { countRequests } from './count-requests';
import { makeClient } from './factories';
import { withFailure as injectFailure } from './inject-failure';
import { freshTable } from './service';

// What the token service's test files (test/integration/token-service-*.test.ts) share: the token
// service over a fresh table of the run's DynamoDB Local with a local key, on a clock of the tests'
// own, and the factories, seeds and checks its tests are written with. A file calls
// useTokenService() once, in its top describe. Its hooks set the exported `let`s (doc, tokens,
// current, …): an importer reads them as they are at that moment (ES module bindings are live), and
// moves the clock with advance() or setClock(), since an import cannot be assigned.

export const ISSUER = 'https://auth.example.test';
export const AUDIENCE = 'https://api.example.test';
// In the future: DynamoDB Local deletes items past their TTL (`expiresAt`) as DynamoDB does, so a
// code stamped by a clock in the past could vanish while a test exchanges it.
export const START = new Date('2046-03-01T10:00:00.000Z');
export const REDIRECT_URI = 'https://app.example.test/callback';
export const SECRET = 'client-secret-that-is-long-enough-0123456789abcdef';

/** An application of the token service tests: secret SECRET, redirect URI REDIRECT_URI (test/support/factories.ts makeClient). */
export function tokenClient(overrides: Partial<Client> = {}): Client {
  return makeClient({
    clientId: `client-${randomUUID()}`, secretHash: hashSecret(SECRET), name: 'Test application', description: 'An application of the token service tests.',
    redirectUris: [REDIRECT_URI], developerName: 'Test Developer', createdAt: '2026-01-01T00:00:00.000', ...overrides,
  });
}

/** What a code is issued for (newAuthorizationCode adds its family, hash and status). */
export function makeCode(clientId: string, now: Date, overrides: Partial<CodeGrant> = {}): CodeGrant {
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
export function pkcePair() {
  const verifier = randomToken();
  return { verifier, challenge: hashSecret(verifier) };
}

export let doc: DocumentClient;
export let table: string;
export let clients: ClientRepo;
export let grants: GrantRepo;
/** The device authorization grant's repository, which `tokens` has (RFC 8628). */
export let deviceGrants: DeviceGrantRepo;
export let signer: TokenSigner;
export let tokens: TokenService;
/** The token service's clock: START at the start of each test. */
export let current: Date;
/** The requests of `doc`, which the token service sends its own through; reset before each test. */
export let requests: ReturnType<typeof countRequests>;
let keyDir: string | undefined;

/** The token service and its table, for the tests of the describe it is called in (once a file). */
export function useTokenService(): void {
  beforeAll(async () => {
    ({ doc, table } = await freshTable());
    clients = createClientRepo({ doc, table });
    grants = createGrantRepo({ doc, table });
    deviceGrants = createDeviceGrantRepo({ doc, table });
    keyDir = mkdtempSync(join(tmpdir(), 'dus-token-service-'));
    signer = createLocalSigner(join(keyDir, 'signing-key.pem'));
    tokens = createTokenService({
      grants, deviceGrants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current,
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
}

export const advance = (seconds: number) => {
  current = new Date(current.getTime() + seconds * 1000);
};

/** Revokes `token` as the revocation endpoint does (shared/oauth/revocation.ts), on the tests' clock. */
export const revokeToken = (credentials: ClientCredentials, token: string) => revokeWithGrants(grants, credentials, token, current);

/** Sets the token service's clock to `time`. */
export const setClock = (time: Date) => {
  current = time;
};

/** A registered client and a code issued to it now; not counted as the test's requests. */
export async function seedCode(options: { client?: Partial<Client>; code?: Partial<CodeGrant> } = {}) {
  const client = tokenClient(options.client);
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
export async function seedTokens(options: Parameters<typeof seedCode>[0] = {}) {
  const seeded = await seedCode(options);
  const issued = await tokens.exchangeCode(seeded.credentials, { code: seeded.code, redirectUri: REDIRECT_URI });
  requests.reset();
  return { ...seeded, issued };
}

/** Every item the table holds for a client, read without the repositories, by key prefix. */
export async function itemsOf(clientId: string) {
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
export async function codeItem(code: string) {
  const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(grantTokenNames(code)!.familyId), ConsistentRead: true }));
  requests.reset();
  return Item;
}

/** The family item a refresh token names (its id is in the token). */
export async function familyOf(token: string) {
  const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(grantTokenNames(token)!.familyId), ConsistentRead: true }));
  requests.reset();
  return Item;
}

export async function familyStatus(familyId: string) {
  const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(familyId), ConsistentRead: true }));
  requests.reset();
  return Item?.status;
}

/** Asserts that nothing was issued for the client: the code is still pending, no family, no refresh token. */
export async function expectNothingWritten(clientId: string, code: string) {
  const items = await itemsOf(clientId);
  expect(items.families).toEqual([]);
  expect(items.refreshTokens).toEqual([]);
  const stored = await codeItem(code);
  expect(stored).toMatchObject({ status: 'pending', codeHash: hashSecret(code) });
  expect(stored?.activeTokenHash).toBeUndefined();
}

export async function expectOAuthError(promise: Promise<unknown>, type: new (...args: never[]) => AppError, code: string, status: number) {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(type);
  expect(error).toMatchObject({ code, status });
}

export const expectInvalidGrant = (promise: Promise<unknown>) => expectOAuthError(promise, InvalidGrantError, 'invalid_grant', 400);

export async function verifyAccessToken(token: string) {
  const key = await importJWK(await signer.publicJwk(), 'RS256');
  return jwtVerify(token, key, {
    issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt', algorithms: ['RS256'], currentDate: current,
  });
}

/** Runs `act` while the first `times` requests of `command` that `doc` sends fail with `failure()`, and settles it. */
export const withFailure = <T>(command: string, failure: () => Error, act: () => Promise<T>, times?: number) => injectFailure(doc, command, failure, act, times);
export const throttled = () => Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ProvisionedThroughputExceededException' });
/** How many of the test's requests were of the operation `name`. */
export const operationsOf = (name: string) => requests.operations.filter((operation) => operation === name).length;
