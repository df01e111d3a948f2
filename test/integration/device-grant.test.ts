import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, ScanCommand, UpdateCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { createClientCache } from '#shared/oauth/client-cache';
import { createTokenService } from '#shared/oauth/token-service';
import { DEVICE_CODE_GRANT_TYPE, DEVICE_PAGE_PATH } from '#shared/oauth/grants/device-code';
import {
  decideDeviceRequest, findDeviceRequest, isDeviceRequest, MALFORMED_CODE, TOO_MANY_ENTRIES, UNKNOWN_CODE, type DeviceApprovalDeps, type DeviceRequest,
} from '#shared/oauth/device-approval';
import { deviceCodeFamily, grantTokenNames, newDeviceCode } from '#shared/oauth/grant-tokens';
import { createBatchReader } from '#shared/data/batch-read';
import { POLL_LEEWAY_MS, type DeviceGrantRepo } from '#shared/data/device-grant-repo';
import { ENTRY_COUNT_TRIES } from '#shared/data/user-code-repo';
import { clientKey, consentKey, familyKey, userCodeEntriesKey, userCodeKey } from '#shared/data/item-keys';
import { normalizeUserCode, type DeviceAuthorization } from '#shared/domain/device-authorization';
import type { Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import {
  BadRequestError, DeviceGrantError, InvalidClientError, InvalidScopeError, UnauthorizedClientError, type AppError,
} from '#shared/errors';
import { hashSecret, randomToken } from '#shared/secrets';
import { countRequests } from '../support/count-requests';
import {
  advance, AUDIENCE, clients, current, deviceGrants, doc, expectInvalidGrant, expectOAuthError, grants, ISSUER, tokenClient, requests, SECRET,
  setClock, signer, START, table, throttled, tokens, useTokenService, verifyAccessToken, withFailure,
} from '../support/token-service';

// The device authorization grant (RFC 8628) in process, over DynamoDB Local on the tests' clock:
// the device authorization, the device's polls at the token service, and the /device page's
// service (device-approval.ts) with the repository under both. Over HTTP, with a client library
// and a browser: test/e2e/device-flow.test.ts.

const INVALID_CODE = 'The device code is invalid, expired or already used.';
const SECOND = 1000;

describe('device authorization grant', () => {
  useTokenService();

  // --- Helpers ---------------------------------------------------------------------------------

  /** A registered client that uses the device flow (public unless `confidential`); not counted as the test's requests. */
  async function seedClient(options: { confidential?: boolean; client?: Partial<Client> } = {}) {
    const client = tokenClient({
      deviceFlow: true, redirectUris: [], ...(options.confidential ? {} : { clientType: 'public', secretHash: undefined }), ...options.client,
    });
    await clients.createClient(client);
    requests.reset();
    const credentials: ClientCredentials = options.confidential
      ? { clientId: client.clientId, clientSecret: SECRET, basic: false }
      : { clientId: client.clientId, basic: false, missing: 'invalid_request' };
    return { client, credentials };
  }

  /** A client and a device authorization it started now; not counted as the test's requests. */
  async function seedDevice(options: Parameters<typeof seedClient>[0] & { scope?: string } = {}) {
    const seeded = await seedClient(options);
    const started = await tokens.authorizeDevice(seeded.credentials, { scope: options.scope ?? 'read_device read_user' });
    requests.reset();
    return { ...seeded, started, familyId: deviceCodeFamily(started.device_code)! };
  }

  const poll = (credentials: ClientCredentials, deviceCode: string) => tokens.pollDeviceCode(credentials, { deviceCode });

  async function getItem(key: { pk: string; sk: string }) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
    requests.reset();
    return Item;
  }
  const familyItem = (familyId: string) => getItem(familyKey(familyId));
  const userCodeHash = (userCode: string) => hashSecret(normalizeUserCode(userCode)!);
  const userCodeItem = (userCode: string) => getItem(userCodeKey(userCodeHash(userCode)));

  /** Every item of the table, to compare before and after a refused request. */
  async function scanAll() {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    requests.reset();
    return Items.map((item) => JSON.stringify(item)).sort();
  }

  async function expectDeviceError(promise: Promise<unknown>, code: string, description: string) {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(DeviceGrantError);
    expect(error).toMatchObject({ code, status: 400, message: description });
  }
  const expectPending = (promise: Promise<unknown>) =>
    expectDeviceError(promise, 'authorization_pending', 'The user has not yet approved the request: poll again after the interval.');
  async function expectInvalidCode(promise: Promise<unknown>) {
    await expectInvalidGrant(promise);
    await expect(promise).rejects.toThrow(INVALID_CODE);
  }
  async function expectError(promise: Promise<unknown>, type: new (...args: never[]) => AppError, code: string, status: number, message: string) {
    await expectOAuthError(promise, type, code, status);
    await expect(promise).rejects.toThrow(message);
  }

  const page = (): DeviceApprovalDeps => ({ deviceGrants, batch: createBatchReader({ doc, table }), clients, grants });
  const address = () => `198.51.100.7-${randomUUID()}`;

  /** The request a user code names, as the /device page finds it for `userId` (from an address of its own). */
  async function found(userCode: string, userId: string, now = current): Promise<DeviceRequest> {
    const request = await findDeviceRequest(page(), userCode, userId, address(), now);
    if (!isDeviceRequest(request)) throw new Error(`No request: ${request.problem}`);
    requests.reset();
    return request;
  }

  /** The user's decision on the code, as the /device page records it. */
  async function decide(userCode: string, allow: boolean, userId = randomUUID()) {
    const outcome = await decideDeviceRequest(page(), await found(userCode, userId), userId, { allow: allow }, current);
    expect(outcome).toBe('done');
    requests.reset();
    return userId;
  }

  const consentOf = (userId: string, clientId: string, overrides: Partial<Consent> = {}): Consent => ({
    userId, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(START), grantGeneration: randomUUID(), ...overrides,
  });

  /** A TransactWriteItems cancelled with these reasons (what DynamoDB answers), on demand. */
  const cancelled = (...codes: string[]) => () => Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })),
  });

  // --- The device authorization -----------------------------------------------------------------

  describe('device authorization', () => {
    it('answers RFC 8628\'s members for a public client, and stores the authorization and its user code by their hashes', async () => {
      // Prepare
      const { client, credentials } = await seedClient();

      // Act
      const started = await tokens.authorizeDevice(credentials, { scope: ' read_device  read_user read_device ' });

      // Assess
      const operations = [...requests.operations];
      expect(started).toEqual({
        device_code: expect.stringMatching(/^[0-9a-f-]{36}\.[0-9A-Za-z_-]{43}$/),
        user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
        verification_uri: 'https://auth.example.test/device',
        verification_uri_complete: `https://auth.example.test/device?user_code=${started.user_code}`,
        expires_in: 600,
        interval: 5,
      });
      expect(operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
      const familyId = deviceCodeFamily(started.device_code)!;
      const expiresAt = epochSeconds(START) + 600;
      expect(await familyItem(familyId)).toEqual({
        pk: `FAMILY#${familyId}`, sk: 'FAMILY', gsi1pk: `FAMILIES#${client.clientId}`, gsi1sk: `DEVICE#${familyId}`,
        familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], status: 'device_pending',
        deviceCodeHash: hashSecret(started.device_code), confidential: false, intervalMs: 5000, expiresAt,
      });
      const userCode = started.user_code.replace('-', '');
      expect(await getItem(userCodeKey(hashSecret(userCode)))).toEqual({
        pk: `USERCODE#${hashSecret(userCode)}`, sk: 'USERCODE', familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], expiresAt,
      });
      const stored = (await scanAll()).join('\n');
      expect(stored).not.toContain(started.device_code);
      expect(stored).not.toContain(userCode);
      expect(DEVICE_PAGE_PATH).toBe('/device');
      expect(DEVICE_CODE_GRANT_TYPE).toBe('urn:ietf:params:oauth:grant-type:device_code');
    });

    it('marks the authorization of a confidential client, which authenticates with its secret', async () => {
      const { familyId } = await seedDevice({ confidential: true, scope: 'read_device' });

      expect(await familyItem(familyId)).toMatchObject({ confidential: true, scopes: ['read_device'], status: 'device_pending' });
    });

    it('refuses an unknown client, and a confidential one with a wrong secret, as invalid_client, writing nothing', async () => {
      const { client } = await seedClient({ confidential: true });
      const before = await scanAll();

      await expectOAuthError(tokens.authorizeDevice({ clientId: `client-${randomUUID()}`, basic: false, missing: 'invalid_request' }, { scope: 'read_device' }),
        InvalidClientError, 'invalid_client', 401);
      await expectOAuthError(tokens.authorizeDevice({ clientId: client.clientId, clientSecret: 'wrong', basic: false }, { scope: 'read_device' }),
        InvalidClientError, 'invalid_client', 401);

      expect(await scanAll()).toEqual(before);
    });

    it.each([
      ['without the setting', {}],
      ['with the setting off', { deviceFlow: false }],
    ])('refuses an application %s as unauthorized_client, writing nothing', async (_, overrides) => {
      const client = tokenClient({ ...overrides, deviceFlow: undefined, ...overrides });
      await clients.createClient(client);
      const before = await scanAll();

      await expectError(tokens.authorizeDevice({ clientId: client.clientId, clientSecret: SECRET, basic: false }, { scope: 'read_device' }),
        UnauthorizedClientError, 'unauthorized_client', 400,
        'This application does not use the device flow: its developer can enable it in the developer console.');

      expect(await scanAll()).toEqual(before);
    });

    it.each([
      ['no scope', undefined, 'scope is required.'],
      ['an empty scope', '', 'scope is required.'],
      ['only spaces', '   ', 'scope is required.'],
      ['unknown scopes', 'read_device open_door read_user close_door', 'Unknown scope: open_door close_door.'],
      ['a long unknown scope', `read_device ${'x'.repeat(150)}`, `Unknown scope: ${'x'.repeat(100)}.`],
    ])('refuses %s as invalid_scope, writing nothing', async (_, scope, description) => {
      const { credentials } = await seedClient();
      const before = await scanAll();

      const error = await tokens.authorizeDevice(credentials, { scope }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvalidScopeError);
      expect(error).toMatchObject({ code: 'invalid_scope', status: 400, message: description });
      expect(await scanAll()).toEqual(before);
    });

    it('draws another user code when one is taken, up to three draws', async () => {
      // Prepare: a repository whose first two user codes are taken.
      const { credentials } = await seedClient();
      const drawn: string[] = [];
      const taken = (free: number): DeviceGrantRepo => ({
        ...deviceGrants,
        createDeviceAuthorization: (authorization, hash, now) => {
          drawn.push(hash);
          return drawn.length > free ? deviceGrants.createDeviceAuthorization(authorization, hash, now) : Promise.resolve(false);
        },
      });
      const service = (repo: DeviceGrantRepo) => createTokenService({
        grants, deviceGrants: repo, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current,
      });

      // Act
      const started = await service(taken(2)).authorizeDevice(credentials, { scope: 'read_device' });
      const thirdDraws = drawn.splice(0);
      const refused = await service(taken(3)).authorizeDevice(credentials, { scope: 'read_device' }).catch((e: unknown) => e);

      // Assess
      expect(thirdDraws).toHaveLength(3);
      expect(new Set(thirdDraws).size).toBe(3);
      expect(thirdDraws[2]).toBe(userCodeHash(started.user_code));
      expect(await userCodeItem(started.user_code)).toMatchObject({ familyId: deviceCodeFamily(started.device_code) });
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toBe('No free user code after several draws.');
      expect(drawn).toHaveLength(3);
    });

    it('refuses a confidential application deleted since the client cache took it as invalid_client, writing nothing', async () => {
      // Prepare: the cache has the client from its first device authorization.
      const cached = createTokenService({
        grants, deviceGrants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current, clientCache: createClientCache(),
      });
      const { client, credentials } = await seedClient({ confidential: true });
      await cached.authorizeDevice(credentials, { scope: 'read_device' });
      await doc.send(new DeleteCommand({ TableName: table, Key: clientKey(client.clientId) }));
      const before = await scanAll();

      // Act
      const refused = cached.authorizeDevice(credentials, { scope: 'read_device' });

      // Assess: the device authorization reads the client whatever the cache holds.
      await expectOAuthError(refused, InvalidClientError, 'invalid_client', 401);
      expect(await scanAll()).toEqual(before);
    });

    it('needs the device grant repository: a token service without it refuses the device flow', async () => {
      const { credentials } = await seedClient();
      const without = createTokenService({ grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current });

      await expect(without.authorizeDevice(credentials, { scope: 'read_device' })).rejects.toThrow('This token service has no device grant repository.');
      await expect(without.pollDeviceCode(credentials, { deviceCode: newDeviceCode().deviceCode }))
        .rejects.toThrow('This token service has no device grant repository.');
    });
  });

  describe('device grant repository: creating', () => {
    const authorization = (clientId: string, expiresAt = epochSeconds(current) + 600): DeviceAuthorization => ({
      familyId: newDeviceCode().familyId, clientId, scopes: ['read_device'], status: 'device_pending', deviceCodeHash: hashSecret(randomToken()),
      confidential: false, intervalMs: 5000, expiresAt,
    });

    it('refuses a user code another live authorization holds, writing nothing, and takes one whose authorization expired', async () => {
      const { client } = await seedClient();
      const code = hashSecret(randomToken());
      const now = current;
      const first = authorization(client.clientId, epochSeconds(now) + 1);
      expect(await deviceGrants.createDeviceAuthorization(first, code, now)).toBe(true);
      const before = await scanAll();

      const second = authorization(client.clientId);
      const whileLive = await deviceGrants.createDeviceAuthorization(second, code, now);
      const afterScan = await scanAll();
      const third = authorization(client.clientId);
      const onceExpired = await deviceGrants.createDeviceAuthorization(third, code, new Date(now.getTime() + SECOND));

      expect(whileLive).toBe(false);
      expect(afterScan).toEqual(before);
      expect(onceExpired).toBe(true);
      expect(await getItem(userCodeKey(code))).toMatchObject({ familyId: third.familyId });
    });

    it('never overwrites a family: the same authorization twice is an error', async () => {
      const { client } = await seedClient();
      const stored = authorization(client.clientId);
      await deviceGrants.createDeviceAuthorization(stored, hashSecret(randomToken()), current);

      await expect(deviceGrants.createDeviceAuthorization(stored, hashSecret(randomToken()), current)).rejects.toMatchObject({ name: 'TransactionCanceledException' });
      await expect(deviceGrants.createDeviceAuthorization(stored, hashSecret(randomToken()), undefined)).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    });

    it('passes on other storage errors', async () => {
      const { client } = await seedClient();

      const result = await withFailure('TransactWriteItemsCommand', throttled,
        () => deviceGrants.createDeviceAuthorization(authorization(client.clientId), hashSecret(randomToken()), current));

      expect(result).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
    });
  });

  // --- Polling ---------------------------------------------------------------------------------

  describe('polling', () => {
    it('answers authorization_pending with one UpdateItem that sets the next poll time', async () => {
      const { credentials, started, familyId } = await seedDevice();

      await expectPending(poll(credentials, started.device_code));

      expect(requests.operations).toEqual(['UpdateItemCommand']);
      expect(await familyItem(familyId)).toMatchObject({ status: 'device_pending', intervalMs: 5000, nextPollAt: START.getTime() + 5000 });
    });

    it('answers slow_down to a poll more than the leeway before its interval, and the interval grows by 5 s each time', async () => {
      // Prepare
      const { credentials, started, familyId } = await seedDevice();
      await expectPending(poll(credentials, started.device_code));
      expect(POLL_LEEWAY_MS).toBe(1000);
      requests.reset();

      // Act
      setClock(new Date(START.getTime() + 5000 - POLL_LEEWAY_MS - 1));
      const first = poll(credentials, started.device_code);
      await expectDeviceError(first, 'slow_down', 'Polling too fast: wait at least 10 seconds between requests from now on.');
      const firstOperations = [...requests.operations];
      const afterFirst = await familyItem(familyId);
      setClock(new Date(START.getTime() + 3999 + 10_000 - POLL_LEEWAY_MS - 1));
      const second = poll(credentials, started.device_code);
      await expectDeviceError(second, 'slow_down', 'Polling too fast: wait at least 15 seconds between requests from now on.');
      const afterSecond = await familyItem(familyId);

      // Assess
      expect(firstOperations).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
      expect(afterFirst).toMatchObject({ status: 'device_pending', intervalMs: 10_000, nextPollAt: START.getTime() + 3999 + 10_000 });
      expect(afterSecond).toMatchObject({ status: 'device_pending', intervalMs: 15_000, nextPollAt: START.getTime() + 12_998 + 15_000 });
      // On time with the new interval: pending, and the next poll is due 15 s later.
      setClock(new Date(START.getTime() + 12_998 + 15_000 - POLL_LEEWAY_MS));
      await expectPending(poll(credentials, started.device_code));
      expect(await familyItem(familyId)).toMatchObject({ intervalMs: 15_000, nextPollAt: current.getTime() + 15_000 });
    });

    it('takes a poll up to the leeway before its interval as on time', async () => {
      const { credentials, started, familyId } = await seedDevice();
      await expectPending(poll(credentials, started.device_code));

      setClock(new Date(START.getTime() + 5000 - POLL_LEEWAY_MS));
      await expectPending(poll(credentials, started.device_code));

      expect(await familyItem(familyId)).toMatchObject({ intervalMs: 5000, nextPollAt: START.getTime() + 4000 + 5000 });
    });

    it('answers expired_token from the code\'s expiry on, writing nothing, and pending until then', async () => {
      // Prepare
      const early = await seedDevice();
      const late = await seedDevice();
      const expiresAt = epochSeconds(START) + 600;

      // Act, Assess
      setClock(new Date(expiresAt * SECOND - 1));
      await expectPending(poll(early.credentials, early.started.device_code));
      setClock(new Date(expiresAt * SECOND));
      const before = await scanAll();
      await expectDeviceError(poll(late.credentials, late.started.device_code), 'expired_token', 'The device code has expired: start a new device authorization.');
      expect(requests.operations).toEqual(['UpdateItemCommand']);
      // The early one too, though it polled within its interval.
      await expectDeviceError(poll(early.credentials, early.started.device_code), 'expired_token', 'The device code has expired: start a new device authorization.');
      expect(await scanAll()).toEqual(before);
    });

    it('answers access_denied once the user denied', async () => {
      const { credentials, started } = await seedDevice();
      await decide(started.user_code, false);

      await expectDeviceError(poll(credentials, started.device_code), 'access_denied', 'The user denied the request.');
      advance(5);
      await expectDeviceError(poll(credentials, started.device_code), 'access_denied', 'The user denied the request.');
    });

    it('gives tokens once the user allowed: the authorization becomes an active family, and its refresh token works', async () => {
      // Prepare
      const { client, credentials, started, familyId } = await seedDevice();
      await expectPending(poll(credentials, started.device_code));
      const userId = await decide(started.user_code, true);
      const approved = await familyItem(familyId);
      advance(5);

      // Act
      const issued = await poll(credentials, started.device_code);

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand', 'TransactWriteItemsCommand']);
      expect(issued).toEqual({
        access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'read_device read_user',
      });
      expect((await verifyAccessToken(issued.access_token)).payload).toMatchObject({
        sub: userId, client_id: client.clientId, scope: 'read_device read_user', iss: ISSUER, aud: AUDIENCE,
      });
      expect(grantTokenNames(issued.refresh_token)).toEqual({ userId, familyId });
      expect(await familyItem(familyId)).toEqual({
        pk: `FAMILY#${familyId}`, sk: 'FAMILY', gsi1pk: `FAMILIES#${client.clientId}`, gsi1sk: `USER#${userId}#${familyId}`,
        familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], status: 'active', userId,
        grantGeneration: approved?.grantGeneration, decidedAt: formatTimestamp(START),
        deviceCodeHash: hashSecret(started.device_code), activeTokenHash: hashSecret(issued.refresh_token), createdAt: formatTimestamp(current),
      });
      const refreshed = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      expect(refreshed.scope).toBe('read_device read_user');
      expect(refreshed.refresh_token).not.toBe(issued.refresh_token);
    });

    it('revokes the family when the device code is presented again after its redemption (code_replay)', async () => {
      // Prepare
      const { credentials, started, familyId } = await seedDevice();
      await decide(started.user_code, true);
      const issued = await poll(credentials, started.device_code);
      requests.reset();
      advance(5);

      // Act
      await expectInvalidCode(poll(credentials, started.device_code));
      const replayOperations = [...requests.operations];
      const revoked = await familyItem(familyId);
      advance(5);
      await expectInvalidCode(poll(credentials, started.device_code));
      const againOperations = [...requests.operations];

      // Assess: the revocation is written once; a public client is read before the answer.
      expect(replayOperations).toEqual(['UpdateItemCommand', 'UpdateItemCommand', 'BatchGetItemCommand']);
      expect(revoked).toMatchObject({ status: 'revoked', revokedReason: 'code_replay' });
      expect(againOperations).toEqual(['UpdateItemCommand', 'BatchGetItemCommand']);
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
    });

    it.each([
      ['withdrawn', async (userId: string, clientId: string) => grants.deleteConsent(userId, clientId)],
      ['given again under a new generation', async (userId: string, clientId: string) => grants.saveConsent(consentOf(userId, clientId))],
    ])('gives no tokens when the consent was %s between the approval and the poll, and revokes the family', async (_, change) => {
      const { client, credentials, started, familyId } = await seedDevice();
      const userId = await decide(started.user_code, true);
      await change(userId, client.clientId);
      requests.reset();

      await expectInvalidCode(poll(credentials, started.device_code));

      expect(requests.operations).toEqual(['UpdateItemCommand', 'TransactWriteItemsCommand', 'UpdateItemCommand']);
      expect(await familyItem(familyId)).toMatchObject({ status: 'revoked', revokedReason: 'user_revoked' });
      expect((await familyItem(familyId))?.activeTokenHash).toBeUndefined();
    });

    it('gives no tokens, and revokes nothing, when another poll redeemed the code since this one read it', async () => {
      // Prepare: a repository whose redemption finds the code redeemed by a concurrent poll.
      const { credentials, started, familyId } = await seedDevice();
      await decide(started.user_code, true);
      const raced = createTokenService({
        grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current,
        deviceGrants: {
          ...deviceGrants,
          redeemDeviceCode: async (authorization, tokenHash, now) => {
            expect(await deviceGrants.redeemDeviceCode(authorization, hashSecret(randomToken()), now)).toBe('done');
            return deviceGrants.redeemDeviceCode(authorization, tokenHash, now);
          },
        },
      });

      // Act
      await expectInvalidCode(raced.pollDeviceCode(credentials, { deviceCode: started.device_code }));

      // Assess
      expect(await familyItem(familyId)).toMatchObject({ status: 'active' });
    });

    it('answers a public client polling a confidential client\'s code as missing credentials, writing nothing', async () => {
      const { client, started } = await seedDevice({ confidential: true });
      const before = await scanAll();
      const none = (missing: 'invalid_request' | 'invalid_client'): ClientCredentials => ({ clientId: client.clientId, basic: false, missing });

      await expectError(poll(none('invalid_request'), started.device_code), BadRequestError, 'invalid_request', 400, 'client_id and client_secret are required');
      await expectOAuthError(poll(none('invalid_client'), started.device_code), InvalidClientError, 'invalid_client', 401);

      expect(await scanAll()).toEqual(before);
    });

    it('refuses a code whose authorization was made for the other type of client (its type changed since), writing nothing', async () => {
      const { credentials, started, familyId } = await seedDevice();
      await doc.send(new UpdateCommand({ TableName: table, Key: familyKey(familyId), UpdateExpression: 'SET confidential = :yes', ExpressionAttributeValues: { ':yes': true } }));
      const before = await scanAll();

      await expectInvalidCode(poll(credentials, started.device_code));

      expect(requests.operations).toEqual(['UpdateItemCommand', 'BatchGetItemCommand']);
      expect(await scanAll()).toEqual(before);
    });

    it('refuses another client\'s code, another code of the same family, and a code of no family as invalid_grant, writing nothing', async () => {
      const { started, familyId } = await seedDevice();
      const other = await seedClient();
      const before = await scanAll();

      await expectInvalidCode(poll(other.credentials, started.device_code));
      const otherClientOperations = [...requests.operations];
      requests.reset();
      const { credentials } = { credentials: { clientId: (await familyItem(familyId))!.clientId as string, basic: false, missing: 'invalid_request' as const } };
      await expectInvalidCode(poll(credentials, `${familyId}.${randomToken()}`));
      await expectInvalidCode(poll(credentials, newDeviceCode().deviceCode));

      expect(otherClientOperations).toEqual(['UpdateItemCommand', 'BatchGetItemCommand']);
      expect(await scanAll()).toEqual(before);
    });

    it('refuses a malformed code as invalid_grant without a poll, after authenticating the client', async () => {
      const publicClient = await seedClient();
      const confidential = await seedClient({ confidential: true });

      await expectInvalidCode(poll(publicClient.credentials, 'not-a-device-code'));
      const publicOperations = [...requests.operations];
      requests.reset();
      await expectInvalidCode(poll(confidential.credentials, 'not-a-device-code'));
      const confidentialOperations = [...requests.operations];

      expect(publicOperations).toEqual(['BatchGetItemCommand']);
      expect(confidentialOperations).toEqual(['BatchGetItemCommand']);
    });

    it('refuses an unknown client as invalid_client, with a malformed code or a real one, writing nothing', async () => {
      const { started } = await seedDevice();
      const before = await scanAll();
      const unknown: ClientCredentials = { clientId: `client-${randomUUID()}`, basic: false, missing: 'invalid_request' };

      await expectOAuthError(poll(unknown, 'not-a-device-code'), InvalidClientError, 'invalid_client', 401);
      await expectOAuthError(poll(unknown, started.device_code), InvalidClientError, 'invalid_client', 401);
      await expectOAuthError(poll(unknown, newDeviceCode().deviceCode), InvalidClientError, 'invalid_client', 401);

      expect(await scanAll()).toEqual(before);
    });

    it('lets a confidential client poll with its secret, reading it each time without a cache, and refuses a wrong secret', async () => {
      // Prepare
      const { client, credentials, started } = await seedDevice({ confidential: true });

      // Act, Assess
      await expectPending(poll(credentials, started.device_code));
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      await expectOAuthError(poll({ ...credentials, clientSecret: 'wrong' }, started.device_code), InvalidClientError, 'invalid_client', 401);
      await decide(started.user_code, true);
      advance(5);
      const issued = await poll(credentials, started.device_code);
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand']);
      expect((await verifyAccessToken(issued.access_token)).payload).toMatchObject({ client_id: client.clientId });
      // Its code polled without the secret: the missing credentials' answer.
      await expectOAuthError(poll({ clientId: client.clientId, basic: false, missing: 'invalid_request' }, started.device_code), BadRequestError, 'invalid_request', 400);
    });

    it('takes a confidential client from the client cache: a poll is then one UpdateItem', async () => {
      // Prepare
      const cached = createTokenService({
        grants, deviceGrants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current, clientCache: createClientCache(),
      });
      const { credentials, started } = await seedDevice({ confidential: true });
      await expectPending(cached.pollDeviceCode(credentials, { deviceCode: started.device_code }));
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      requests.reset();
      advance(5);

      // Act
      await expectPending(cached.pollDeviceCode(credentials, { deviceCode: started.device_code }));

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand']);
    });

    it('passes on storage errors of the poll', async () => {
      const { credentials, started } = await seedDevice();

      const result = await withFailure('UpdateItemCommand', throttled, () => poll(credentials, started.device_code));

      expect(result).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
    });
  });

  describe('device grant repository: polls and redemptions', () => {
    it('answers the poll refused on a missing item with no item, and a refused one with the item as it was', async () => {
      const { client, started, familyId } = await seedDevice();
      const hash = hashSecret(started.device_code);
      const now = current.getTime();

      expect(await deviceGrants.recordPoll(newDeviceCode().familyId, hash, client.clientId, false, now)).toEqual({ polled: false, item: undefined });
      const polled = await deviceGrants.recordPoll(familyId, hash, client.clientId, false, now);
      const refused = await deviceGrants.recordPoll(familyId, hash, client.clientId, false, now);

      expect(polled).toEqual({ polled: true, item: expect.objectContaining({ familyId, nextPollAt: now + 5000, intervalMs: 5000, status: 'device_pending' }) });
      expect(polled.item).not.toHaveProperty('pk');
      expect(refused).toEqual({ polled: false, item: polled.item });
      expect(await deviceGrants.recordPoll(familyId, hash, client.clientId, true, now + 5000)).toEqual({ polled: false, item: polled.item });
    });

    it('slows down only the authorization of the code, and not a redeemed or missing one', async () => {
      const { started, familyId } = await seedDevice();
      const before = await scanAll();

      await deviceGrants.slowDown(familyId, hashSecret(randomToken()), 5000, current.getTime());
      await deviceGrants.slowDown(newDeviceCode().familyId, hashSecret(started.device_code), 5000, current.getTime());
      expect(await scanAll()).toEqual(before);
      await deviceGrants.slowDown(familyId, hashSecret(started.device_code), 5000, current.getTime());

      expect(await familyItem(familyId)).toMatchObject({ intervalMs: 10_000, nextPollAt: current.getTime() + 10_000 });
      const result = await withFailure('UpdateItemCommand', throttled, () => deviceGrants.slowDown(familyId, hashSecret(started.device_code), 5000, current.getTime()));
      expect(result).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
    });

    it('redeems only an approved, unexpired authorization of the code, once, while the consent stands', async () => {
      // Prepare
      const { started, familyId } = await seedDevice();
      const hash = hashSecret(started.device_code);
      const pending = (await familyItem(familyId)) as unknown as DeviceAuthorization;
      const expiry = new Date(pending.expiresAt * SECOND);
      expect(await deviceGrants.redeemDeviceCode({ ...pending, userId: 'nobody' }, hashSecret(randomToken()), current)).toBe('not_pending');
      const userId = await decide(started.user_code, true);
      const approved = (await familyItem(familyId)) as unknown as DeviceAuthorization;
      const before = await scanAll();

      // Act, Assess
      expect(await deviceGrants.redeemDeviceCode({ ...approved, deviceCodeHash: hashSecret(randomToken()) }, hashSecret(randomToken()), current)).toBe('not_pending');
      expect(await deviceGrants.redeemDeviceCode(approved, hashSecret(randomToken()), expiry)).toBe('not_pending');
      expect(await deviceGrants.redeemDeviceCode({ ...approved, grantGeneration: randomUUID() }, hashSecret(randomToken()), current)).toBe('consent_changed');
      expect(await deviceGrants.redeemDeviceCode({ ...approved, userId: randomUUID() }, hashSecret(randomToken()), current)).toBe('consent_changed');
      expect(await scanAll()).toEqual(before);
      const token = hashSecret(randomToken());
      const at = new Date(expiry.getTime() - SECOND);
      expect(await deviceGrants.redeemDeviceCode(approved, token, at)).toBe('done');
      expect(await familyItem(familyId)).toMatchObject({ status: 'active', activeTokenHash: token, deviceCodeHash: hash, userId, createdAt: formatTimestamp(at) });
      expect(await deviceGrants.redeemDeviceCode(approved, hashSecret(randomToken()), current)).toBe('not_pending');
    });

    it('passes on storage errors and unexpected cancellations of a redemption', async () => {
      const { started, familyId } = await seedDevice();
      await decide(started.user_code, true);
      const approved = (await familyItem(familyId)) as unknown as DeviceAuthorization;
      const redeem = () => deviceGrants.redeemDeviceCode(approved, hashSecret(randomToken()), current);

      expect(await withFailure('TransactWriteItemsCommand', throttled, redeem)).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('None', 'TransactionConflict'), redeem))
        .toMatchObject({ status: 'rejected', reason: { name: 'TransactionCanceledException' } });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('TransactionConflict', 'None'), redeem))
        .toMatchObject({ status: 'rejected', reason: { name: 'TransactionCanceledException' } });
      expect(await familyItem(familyId)).toMatchObject({ status: 'device_approved' });
    });
  });

  // --- The /device page's service -----------------------------------------------------------------

  describe('the device page', () => {
    it('finds the request a typed code names, with its application and the user\'s consent so far, in three requests', async () => {
      // Prepare
      const { client, started, familyId } = await seedDevice();
      const userId = randomUUID();
      const consent = consentOf(userId, client.clientId);
      await grants.saveConsent(consent);
      const inputs = countRequests(doc, { keepInputs: true });
      requests.reset();

      // Act
      let request;
      try {
        request = await findDeviceRequest(page(), started.user_code.toLowerCase().replace('-', ' '), userId, address(), current);
      } finally {
        inputs.detach();
      }

      // Assess
      expect(request).toEqual({
        userCode: started.user_code.replace('-', ''),
        code: { familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], expiresAt: epochSeconds(START) + 600 },
        client,
        consent,
      });
      expect(isDeviceRequest(request)).toBe(true);
      expect(requests.operations).toEqual(['TransactWriteItemsCommand', 'GetItemCommand', 'BatchGetItemCommand']);
      expect(inputs.inputs[1]).toMatchObject({ ConsistentRead: true });
      // Without a consent yet.
      expect(await findDeviceRequest(page(), started.user_code, randomUUID(), address(), current)).toEqual({ ...request, consent: undefined });
    });

    it.each([
      ['a vowel', 'AEIO-U123'],
      ['seven letters', 'BCDF-GHJ'],
      ['nothing', undefined],
    ])('refuses %s before counting or reading anything', async (_, typed) => {
      const before = await scanAll();

      const problem = await findDeviceRequest(page(), typed, randomUUID(), address(), current);

      expect(problem).toEqual({ problem: 'That is not a device code: it has eight letters, like BCDF-GHJK, as your device shows it.', status: 400 });
      expect(problem).toEqual({ problem: MALFORMED_CODE, status: 400 });
      expect(isDeviceRequest(problem)).toBe(false);
      expect(requests.operations).toEqual([]);
      expect(await scanAll()).toEqual(before);
    });

    it('counts 20 entries per account in a window of 10 minutes, found or not; the 21st is refused and counted nowhere', async () => {
      // Prepare
      const { started } = await seedDevice();
      const userId = randomUUID();
      const from = address();
      const windowStart = epochSeconds(START);
      expect(windowStart % 600).toBe(0);

      // Act
      const entries: unknown[] = [];
      for (let i = 0; i < 20; i++) entries.push(await findDeviceRequest(page(), 'BCDF-GHJK', userId, from, new Date(START.getTime() + i * SECOND)));
      const lastSecond = new Date(START.getTime() + 600 * SECOND - 1);
      const refused = await findDeviceRequest(page(), started.user_code, userId, from, lastSecond);
      const otherAccount = await findDeviceRequest(page(), 'BCDF-GHJK', randomUUID(), from, lastSecond);
      const nextWindow = await findDeviceRequest(page(), 'BCDF-GHJK', userId, from, new Date(START.getTime() + 600 * SECOND));

      // Assess
      expect(entries).toEqual(Array.from({ length: 20 }, () => ({ problem: UNKNOWN_CODE, status: 400 })));
      expect(UNKNOWN_CODE).toBe('This code is not valid: it may have expired or been used already. Check the code your device shows, or start again on the device.');
      expect(refused).toEqual({ problem: 'Too many codes were entered: wait ten minutes, then try again.', status: 429 });
      expect(refused).toEqual({ problem: TOO_MANY_ENTRIES, status: 429 });
      expect(otherAccount).toEqual({ problem: UNKNOWN_CODE, status: 400 });
      expect(nextWindow).toEqual({ problem: UNKNOWN_CODE, status: 400 });
      expect(await getItem(userCodeEntriesKey('account', userId, windowStart))).toMatchObject({ entries: 20, expiresAt: windowStart + 600 });
      expect(await getItem(userCodeEntriesKey('address', from, windowStart))).toMatchObject({ entries: 21, expiresAt: windowStart + 600 });
      expect(await getItem(userCodeEntriesKey('account', userId, windowStart + 600))).toMatchObject({ entries: 1, expiresAt: windowStart + 1200 });
    });

    it('counts 60 entries per address across accounts; the 61st is refused, and counted nowhere', async () => {
      const from = address();
      const accounts = [randomUUID(), randomUUID(), randomUUID()];

      const counted: unknown[] = [];
      for (const userId of accounts) for (let i = 0; i < 20; i++) counted.push(await findDeviceRequest(page(), 'BCDF-GHJK', userId, from, current));
      const fourth = randomUUID();
      const refused = await findDeviceRequest(page(), 'BCDF-GHJK', fourth, from, current);
      const elsewhere = await findDeviceRequest(page(), 'BCDF-GHJK', fourth, address(), current);

      expect(counted).toEqual(Array.from({ length: 60 }, () => ({ problem: UNKNOWN_CODE, status: 400 })));
      expect(refused).toEqual({ problem: TOO_MANY_ENTRIES, status: 429 });
      expect(elsewhere).toEqual({ problem: UNKNOWN_CODE, status: 400 });
      expect(await getItem(userCodeEntriesKey('address', from, epochSeconds(START)))).toMatchObject({ entries: 60 });
      expect(await getItem(userCodeEntriesKey('account', fourth, epochSeconds(START)))).toMatchObject({ entries: 1 });
    });

    it('counts parallel entries atomically: of 30 at once exactly 20 pass', async () => {
      const userId = randomUUID();
      const limits = { account: 20, address: 60, windowSeconds: 600 };

      const results = await Promise.all(Array.from({ length: 30 }, () => deviceGrants.countUserCodeEntry(userId, address(), limits, current)));

      expect(results.filter(Boolean)).toHaveLength(20);
      expect(await getItem(userCodeEntriesKey('account', userId, epochSeconds(START)))).toMatchObject({ entries: 20 });
    });

    it('counts an entry again after a conflict with a concurrent one, up to nine times, and passes on other errors', async () => {
      const limits = { account: 20, address: 60, windowSeconds: 600 };
      let sent = 0;
      const conflict = () => {
        sent++;
        return cancelled('TransactionConflict', 'None')();
      };
      const count = (userId: string) => () => deviceGrants.countUserCodeEntry(userId, address(), limits, current);

      const afterAllButOne = await withFailure('TransactWriteItemsCommand', conflict, count(randomUUID()), ENTRY_COUNT_TRIES - 1);
      const sentAfterAllButOne = sent;
      sent = 0;
      const afterEveryTry = await withFailure('TransactWriteItemsCommand', conflict, count(randomUUID()), ENTRY_COUNT_TRIES);
      const sentAfterEveryTry = sent;
      const throttledEntry = await withFailure('TransactWriteItemsCommand', throttled, count(randomUUID()), 1);

      expect(afterAllButOne).toEqual({ status: 'fulfilled', value: true });
      expect(sentAfterAllButOne).toBe(ENTRY_COUNT_TRIES - 1);
      expect(afterEveryTry).toMatchObject({ status: 'rejected', reason: { name: 'TransactionCanceledException' } });
      expect(sentAfterEveryTry).toBe(ENTRY_COUNT_TRIES);
      expect(throttledEntry).toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
    });

    it('refuses a code from its expiry on, though DynamoDB has not deleted it yet', async () => {
      const { started } = await seedDevice();
      const expiry = new Date((epochSeconds(START) + 600) * SECOND);

      const before = await findDeviceRequest(page(), started.user_code, randomUUID(), address(), new Date(expiry.getTime() - 1));
      const at = await findDeviceRequest(page(), started.user_code, randomUUID(), address(), expiry);

      expect(isDeviceRequest(before)).toBe(true);
      expect(at).toEqual({ problem: UNKNOWN_CODE, status: 400 });
    });

    it('refuses the code of a deleted application', async () => {
      const { client, started } = await seedDevice();
      await doc.send(new DeleteCommand({ TableName: table, Key: clientKey(client.clientId) }));

      expect(await findDeviceRequest(page(), started.user_code, randomUUID(), address(), current)).toEqual({ problem: UNKNOWN_CODE, status: 400 });
    });

    it('records a denial: the authorization denied, the user code used up, no consent', async () => {
      const { client, started, familyId } = await seedDevice();
      const userId = randomUUID();
      const request = await found(started.user_code, userId);
      advance(1);

      const outcome = await decideDeviceRequest(page(), request, userId, { allow: false }, current);

      expect(outcome).toBe('done');
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await familyItem(familyId)).toEqual({
        pk: `FAMILY#${familyId}`, sk: 'FAMILY', gsi1pk: `FAMILIES#${client.clientId}`, gsi1sk: `DEVICE#${familyId}`,
        familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], status: 'device_denied', decidedAt: formatTimestamp(current),
        deviceCodeHash: hashSecret(started.device_code), confidential: false, intervalMs: 5000, expiresAt: epochSeconds(START) + 600,
      });
      expect(await userCodeItem(started.user_code)).toBeUndefined();
      expect(await getItem(consentKey(userId, client.clientId))).toBeUndefined();
    });

    it('records an approval: the authorization approved for the user under a new consent\'s generation, the user code used up', async () => {
      const { client, started, familyId } = await seedDevice();
      const userId = randomUUID();
      const request = await found(started.user_code, userId);
      advance(1);

      const outcome = await decideDeviceRequest(page(), request, userId, { allow: true }, current);

      expect(outcome).toBe('done');
      const consent = await getItem(consentKey(userId, client.clientId));
      expect(consent).toMatchObject({ userId, clientId: client.clientId, scopes: ['read_device', 'read_user'], grantedAt: formatTimestamp(current) });
      expect(consent?.grantGeneration).toMatch(/^[0-9a-f-]{36}$/);
      expect(await familyItem(familyId)).toEqual({
        pk: `FAMILY#${familyId}`, sk: 'FAMILY', gsi1pk: `FAMILIES#${client.clientId}`, gsi1sk: `USER#${userId}#${familyId}`,
        familyId, clientId: client.clientId, scopes: ['read_device', 'read_user'], status: 'device_approved', userId,
        grantGeneration: consent?.grantGeneration, decidedAt: formatTimestamp(current),
        deviceCodeHash: hashSecret(started.device_code), confidential: false, intervalMs: 5000, expiresAt: epochSeconds(START) + 600,
      });
      expect(await userCodeItem(started.user_code)).toBeUndefined();
    });

    it('records the devices the user chose with the approval, and keeps a previous choice when none is given', async () => {
      const { client, credentials, started } = await seedDevice();
      const userId = randomUUID();

      await decideDeviceRequest(page(), await found(started.user_code, userId), userId, { allow: true, devices: { onlyDevices: ['d1'] } }, current);

      expect(await getItem(consentKey(userId, client.clientId))).toMatchObject({ onlyDevices: ['d1'] });
      const again = await tokens.authorizeDevice(credentials, { scope: 'read_device' });
      await decideDeviceRequest(page(), await found(again.user_code, userId), userId, { allow: true }, current);
      expect(await getItem(consentKey(userId, client.clientId))).toMatchObject({ onlyDevices: ['d1'], revision: 1 });
    });

    it('adds the requested scopes to an existing consent, under its generation', async () => {
      const { client, started, familyId } = await seedDevice();
      const userId = randomUUID();
      const previous = consentOf(userId, client.clientId, { scopes: ['write_device', 'read_device'] });
      await grants.saveConsent(previous);

      expect(await decideDeviceRequest(page(), await found(started.user_code, userId), userId, { allow: true }, current)).toBe('done');

      expect(await getItem(consentKey(userId, client.clientId))).toMatchObject({
        scopes: ['write_device', 'read_device', 'read_user'], grantGeneration: previous.grantGeneration,
      });
      expect(await familyItem(familyId)).toMatchObject({ status: 'device_approved', grantGeneration: previous.grantGeneration });
    });

    it('approves under a consent recorded before generations, which the redemption then checks as such', async () => {
      const { client, credentials, started, familyId } = await seedDevice();
      const userId = randomUUID();
      await grants.saveConsent(consentOf(userId, client.clientId, { grantGeneration: undefined }));

      expect(await decideDeviceRequest(page(), await found(started.user_code, userId), userId, { allow: true }, current)).toBe('done');

      const approved = await familyItem(familyId);
      expect(approved).toMatchObject({ status: 'device_approved', userId });
      expect(approved).not.toHaveProperty('grantGeneration');
      expect((await getItem(consentKey(userId, client.clientId)))).not.toHaveProperty('grantGeneration');
      expect((await poll(credentials, started.device_code)).scope).toBe('read_device read_user');
    });

    it.each([true, false])('answers not_pending to a second decision (allow: %s) on a used code, writing nothing', async (allow) => {
      const { started } = await seedDevice();
      const userId = randomUUID();
      const request = await found(started.user_code, userId);
      expect(await decideDeviceRequest(page(), request, userId, { allow: !allow }, current)).toBe('done');
      const before = await scanAll();

      expect(await decideDeviceRequest(page(), request, userId, { allow: allow }, current)).toBe('not_pending');

      expect(await scanAll()).toEqual(before);
    });

    it.each([true, false])('answers not_pending to a decision (allow: %s) at the user code\'s expiry, writing nothing', async (allow) => {
      const { started } = await seedDevice();
      const userId = randomUUID();
      const request = await found(started.user_code, userId);
      const before = await scanAll();

      expect(await decideDeviceRequest(page(), request, userId, { allow: allow }, new Date(request.code.expiresAt * SECOND))).toBe('not_pending');

      expect(await scanAll()).toEqual(before);
      expect(await decideDeviceRequest(page(), request, userId, { allow: allow }, new Date(request.code.expiresAt * SECOND - 1))).toBe('done');
    });

    it.each([
      ['revoked', async (familyId: string) => grants.revokeFamily(familyId, current, 'user_revoked')],
      ['expired', async (familyId: string) => {
        await doc.send(new UpdateCommand({ TableName: table, Key: familyKey(familyId), UpdateExpression: 'SET expiresAt = :now', ExpressionAttributeValues: { ':now': epochSeconds(current) } }));
      }],
    ])('answers not_pending when the authorization was %s while its user code lives, writing nothing', async (_, change) => {
      for (const allow of [true, false]) {
        const { started, familyId } = await seedDevice();
        const userId = randomUUID();
        const request = await found(started.user_code, userId);
        await change(familyId);
        const before = await scanAll();

        expect(await decideDeviceRequest(page(), request, userId, { allow: allow }, current)).toBe('not_pending');

        expect(await scanAll()).toEqual(before);
      }
    });

    it.each([
      ['given since the page read none', undefined, (userId: string, clientId: string) => consentOf(userId, clientId)],
      ['changed since the page read it', (userId: string, clientId: string) => consentOf(userId, clientId), (userId: string, clientId: string) => consentOf(userId, clientId)],
      ['withdrawn since the page read it', (userId: string, clientId: string) => consentOf(userId, clientId), undefined],
    ])('answers consent_changed to an approval when the consent was %s, writing nothing; a denial still goes through', async (_, first, then) => {
      const { client, started, familyId } = await seedDevice();
      const userId = randomUUID();
      if (first) await grants.saveConsent(first(userId, client.clientId));
      const request = await found(started.user_code, userId);
      if (then) await grants.saveConsent(then(userId, client.clientId));
      else await grants.deleteConsent(userId, client.clientId);
      const before = await scanAll();

      expect(await decideDeviceRequest(page(), request, userId, { allow: true }, current)).toBe('consent_changed');

      expect(await scanAll()).toEqual(before);
      expect(await decideDeviceRequest(page(), request, userId, { allow: false }, current)).toBe('done');
      expect(await familyItem(familyId)).toMatchObject({ status: 'device_denied' });
    });

    it('answers consent_changed to a decision that collided with a concurrent write, and passes on other failures', async () => {
      const { started } = await seedDevice();
      const userId = randomUUID();
      const request = await found(started.user_code, userId);
      const decision = () => decideDeviceRequest(page(), request, userId, { allow: true }, current);

      expect(await withFailure('TransactWriteItemsCommand', cancelled('None', 'None', 'TransactionConflict'), decision)).toEqual({ status: 'fulfilled', value: 'consent_changed' });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('TransactionConflict', 'None', 'None'), decision)).toEqual({ status: 'fulfilled', value: 'consent_changed' });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('None', 'None', 'ConditionalCheckFailed'), decision)).toEqual({ status: 'fulfilled', value: 'consent_changed' });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('ConditionalCheckFailed', 'None', 'None'), decision)).toEqual({ status: 'fulfilled', value: 'not_pending' });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('None', 'ConditionalCheckFailed', 'None'), decision)).toEqual({ status: 'fulfilled', value: 'not_pending' });
      expect(await withFailure('TransactWriteItemsCommand', cancelled('None', 'None', 'ThrottlingError'), decision))
        .toMatchObject({ status: 'rejected', reason: { name: 'TransactionCanceledException' } });
      expect(await withFailure('TransactWriteItemsCommand', throttled, decision))
        .toMatchObject({ status: 'rejected', reason: { name: 'ProvisionedThroughputExceededException' } });
      // The code is still waiting.
      expect(await decision()).toBe('done');
    });
  });
});
