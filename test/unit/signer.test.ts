import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessToken } from '#shared/oauth/access-token';
import { createKmsSigner, isTransientKmsError, type KmsSend } from '#shared/keys/kms-signer';
import { createLocalKeyStore, createLocalSigner } from '#shared/keys/local-signer';
import { SigningUnavailableError, type TokenSigner } from '#shared/keys/signer';
import { KEY_SCHEDULE_CACHE_SECONDS, phasesAt, PUBLISH_LEAD_SECONDS } from '#shared/keys/schedule';
import type { SigningKeyEntry, SigningKeyRepo, SigningKeySchedule, SigningKeyScheduleState } from '#shared/data/signing-key-repo';
import { toAppError } from '#shared/http/http';
import { createFakeKms } from '../support/fake-kms';
import { createKeyring } from '#shared/keys/keyring';
import { rotateSigningKeys } from '#shared/keys/rotation';

const request = {
  issuer: 'https://auth.example',
  audience: 'https://api.example',
  userId: 'user-1',
  clientId: 'client-1',
  scopes: ['read_device', 'write_device'],
};

let keysDir: string;
beforeAll(() => {
  keysDir = mkdtempSync(join(tmpdir(), 'dus-keys-'));
});
afterAll(() => {
  if (keysDir) rmSync(keysDir, { recursive: true, force: true });
});

/** A path for a new key file, in a folder of its own (removed after the file's tests). */
const newKeyFile = (...subfolders: string[]) => join(mkdtempSync(join(keysDir, 'key-')), ...subfolders, 'k.pem');

async function verifyWithJwks(signer: TokenSigner, token: string) {
  const jwks = createLocalJWKSet({ keys: [await signer.publicJwk()] });
  return jwtVerify(token, jwks, { issuer: request.issuer, audience: request.audience, typ: 'at+jwt' });
}

describe('access tokens', () => {
  it('carry the RFC 9068 claims and header', async () => {
    const signer = createLocalSigner(newKeyFile());
    const now = new Date('2026-01-01T00:00:00Z');

    const token = await issueAccessToken(signer, { ...request, now });

    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys: [await signer.publicJwk()] }), {
      currentDate: now,
    });
    expect(protectedHeader).toEqual({ typ: 'at+jwt', alg: 'RS256', kid: signer.kid });
    expect(payload).toMatchObject({
      iss: request.issuer, aud: request.audience, sub: 'user-1', client_id: 'client-1',
      scope: 'read_device write_device', iat: 1767225600, exp: 1767225600 + 3600,
    });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('local signer', () => {
  it('creates its key on first use and reuses it afterwards', async () => {
    const file = newKeyFile('nested');

    const first = createLocalSigner(file);
    const second = createLocalSigner(file);

    expect(second.kid).toBe(first.kid);
    await expect(verifyWithJwks(second, await issueAccessToken(first, request))).resolves.toBeDefined();
  });

  it('names its key by the RFC 7638 thumbprint', async () => {
    const signer = createLocalSigner(newKeyFile());
    const jwk = await signer.publicJwk();
    expect(signer.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n, e: jwk.e }));
    expect(jwk).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: signer.kid });
    expect(jwk).not.toHaveProperty('d');
  });
});

describe('KMS signer', () => {
  it('signs through kms:Sign, and the token verifies against the JWKS derived from the KMS public key', async () => {
    const { kms, calls } = createFakeKms();
    const signer = createKmsSigner(kms, 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');

    const token = await issueAccessToken(signer, request);

    expect(decodeProtectedHeader(token).kid).toBe('1234abcd-12ab-34cd-56ef-1234567890ab');
    const { payload } = await verifyWithJwks(signer, token);
    expect(payload.sub).toBe('user-1');
    expect(calls).toEqual(['Sign', 'GetPublicKey']);
  });

  it('fetches the public key once, not at creation', async () => {
    const { kms, calls } = createFakeKms();
    const signer = createKmsSigner(kms, 'key-id');
    expect(calls).toEqual([]);

    await signer.publicJwk();
    await signer.publicJwk();

    expect(calls).toEqual(['GetPublicKey']);
  });

  it('produces tokens that another key does not verify', async () => {
    const signer = createKmsSigner(createFakeKms().kms, 'key-id');
    const impostor = createKmsSigner(createFakeKms().kms, 'key-id');

    const token = await issueAccessToken(impostor, request);

    await expect(verifyWithJwks(signer, token)).rejects.toThrow(/signature/);
  });
});

describe('KMS signer failures', () => {
  /** An error shaped as the SDK throws it for a KMS error answer. */
  const kmsError = (name: string, httpStatusCode = 400) =>
    Object.assign(new Error(name), { name, $fault: 'client', $metadata: { httpStatusCode, attempts: 3 } });
  /** An error shaped as Node or the SDK's HTTP handler throws it for a network failure. */
  const networkError = (code: string, name = 'Error') => Object.assign(new Error(`connect ${code} 127.0.0.1:443`), { name, code });

  it('turns a throttled kms:Sign into SigningUnavailableError, which the HTTP layer answers with 503 and Retry-After', async () => {
    // Prepare
    const fake = createFakeKms();
    const signer = createKmsSigner(fake.kms, 'key-id');
    fake.failSign(1);

    // Act
    const error = await issueAccessToken(signer, request).then(() => undefined, (e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SigningUnavailableError);
    expect((error as Error).cause).toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    const answer = toAppError(error);
    expect(answer).toMatchObject({ status: 503, code: 'temporarily_unavailable', headers: { 'retry-after': '1' } });
    await expect(verifyWithJwks(signer, await issueAccessToken(signer, request))).resolves.toBeDefined();
  });

  it('keeps a denied kms:Sign a server error, with the KMS error as its cause and nothing of it in the answer', async () => {
    // Prepare
    const fake = createFakeKms();
    const signer = createKmsSigner(fake.kms, 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd');
    fake.failSign(1, 'AccessDeniedException');

    // Act
    const error = await issueAccessToken(signer, request).then(() => undefined, (e: unknown) => e);

    // Assess
    expect(error).not.toBeInstanceOf(SigningUnavailableError);
    expect(error).toMatchObject({ message: 'kms:Sign failed for key 1234abcd', cause: { name: 'AccessDeniedException' } });
    const answer = toAppError(error);
    expect(answer).toMatchObject({ status: 500, code: 'server_error', message: 'An unexpected error occurred.', headers: {} });
  });

  it('turns a throttled kms:GetPublicKey (the JWKS) into SigningUnavailableError, and asks again next time', async () => {
    // Prepare
    const fake = createFakeKms();
    let throttled = true;
    const kms: KmsSend = {
      send: ((command: Parameters<KmsSend['send']>[0]) => {
        if (throttled) {
          throttled = false;
          return Promise.reject(kmsError('ThrottlingException'));
        }
        return fake.kms.send(command);
      }) as KmsSend['send'],
    };
    const signer = createKmsSigner(kms, 'key-id');

    // Act
    const error = await signer.publicJwk().then(() => undefined, (e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SigningUnavailableError);
    await expect(signer.publicJwk()).resolves.toMatchObject({ kty: 'RSA', kid: 'key-id' });
  });

  it.each([
    ['ThrottlingException', kmsError('ThrottlingException')],
    ['KMSInternalException', kmsError('KMSInternalException', 500)],
    ['DependencyTimeoutException', kmsError('DependencyTimeoutException', 503)],
    ['KeyUnavailableException', kmsError('KeyUnavailableException', 500)],
    ['an unnamed 503', kmsError('UnknownError', 503)],
    ['an unnamed 429', kmsError('UnknownError', 429)],
    ['ECONNRESET', networkError('ECONNRESET')],
    ['ECONNREFUSED', networkError('ECONNREFUSED')],
    ['ETIMEDOUT', networkError('ETIMEDOUT')],
    ["the SDK's request timeout", networkError('ETIMEDOUT', 'TimeoutError')],
    ["the SDK's connection timeout", Object.assign(new Error('did not establish a connection'), { name: 'TimeoutError' })],
  ])('counts %s as transient', (_, error) => {
    expect(isTransientKmsError(error)).toBe(true);
  });

  it.each([
    'AccessDeniedException', 'NotFoundException', 'DisabledException', 'InvalidKeyUsageException', 'KMSInvalidStateException',
    'ValidationException',
  ])('counts %s as a configuration error', (name) => {
    expect(isTransientKmsError(kmsError(name))).toBe(false);
  });

  it('counts a non-error as a configuration error', () => {
    expect(isTransientKmsError('ThrottlingException')).toBe(false);
    expect(isTransientKmsError(undefined)).toBe(false);
  });
});

describe('keyring (the keys a function sees during a rotation)', () => {
  /** A key store of local files and a schedule held in memory, with a count of its reads. */
  function setUp() {
    const store = createLocalKeyStore(newKeyFile());
    let schedule: SigningKeySchedule | undefined;
    const repo = {
      reads: 0,
      failNext: false,
      async getSchedule() {
        repo.reads += 1;
        if (repo.failNext) {
          repo.failNext = false;
          throw new Error('storage down');
        }
        return schedule;
      },
      async saveSchedule(state: SigningKeyScheduleState, version: number) {
        schedule = { ...state, version: version + 1 };
      },
    };
    let now = Date.UTC(2026, 0, 1);
    const clock = { now: () => new Date(now), pass: (seconds: number) => { now += seconds * 1000; } };
    const keyring = createKeyring({ repo, source: store, now: clock.now });
    return { store, repo, clock, keyring, rotate: () => rotateSigningKeys({ repo: repo as unknown as SigningKeyRepo, store, now: clock.now }, { mode: 'now' }) };
  }

  it('before any rotation, signs with and publishes the service\'s own key', async () => {
    const { store, keyring } = setUp();
    const own = store.signerFor(store.initialRef);
    expect((await keyring.currentSigner()).kid).toBe(own.kid);
    expect((await keyring.publishedKeys()).map((k) => k.kid)).toEqual([own.kid]);
  });

  it('reads the schedule at most once per KEY_SCHEDULE_CACHE_SECONDS, and not at all again for the switch', async () => {
    const { repo, clock, keyring, rotate, store } = setUp();
    const next = (await rotate()).introduced!;
    for (let i = 0; i < 5; i++) await keyring.currentSigner();
    expect(repo.reads).toBe(2); // the rotation's read, then the keyring's one
    clock.pass(KEY_SCHEDULE_CACHE_SECONDS - 1);
    await keyring.publishedKeys();
    expect(repo.reads).toBe(2);
    clock.pass(1);
    await keyring.publishedKeys();
    expect(repo.reads).toBe(3);
    // The switch is the clock's: what was read says when.
    expect((await keyring.currentSigner()).kid).toBe(store.signerFor(store.initialRef).kid);
    clock.pass(PUBLISH_LEAD_SECONDS - KEY_SCHEDULE_CACHE_SECONDS);
    expect((await keyring.currentSigner()).kid).toBe(next.kid);
  });

  it('does not keep a failed read: the next call reads again', async () => {
    const { repo, keyring } = setUp();
    repo.failNext = true;
    await expect(keyring.currentSigner()).rejects.toThrow('storage down');
    await expect(keyring.currentSigner()).resolves.toBeDefined();
    expect(repo.reads).toBe(2);
  });

  it('gives each key its phase by the clock: pending, active, retiring, retired', () => {
    const keys: SigningKeyEntry[] = [
      { kid: 'old', ref: 'a', createdAt: 0, activateAt: 0, retireAt: 200 },
      { kid: 'current', ref: 'b', createdAt: 50, activateAt: 100, retireAt: 400 },
      { kid: 'next', ref: 'c', createdAt: 150, activateAt: 300 },
    ];
    const at = (now: number) => phasesAt(keys, now).map(({ key, phase }) => `${key.kid}:${phase}`);
    expect(at(99)).toEqual(['old:active', 'current:pending', 'next:pending']);
    expect(at(100)).toEqual(['old:retiring', 'current:active', 'next:pending']);
    expect(at(200)).toEqual(['old:retired', 'current:active', 'next:pending']);
    expect(at(300)).toEqual(['old:retired', 'current:retiring', 'next:active']);
    expect(at(400)).toEqual(['old:retired', 'current:retired', 'next:active']);
  });
});
