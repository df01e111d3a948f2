import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { issueAccessToken } from '#shared/auth/access-token';
import { createKmsSigner } from '#shared/auth/kms-signer';
import { createLocalSigner } from '#shared/auth/local-signer';
import type { TokenSigner } from '#shared/auth/signer';
import { createFakeKms } from '../support/fake-kms';

const request = {
  issuer: 'https://auth.example',
  audience: 'https://api.example',
  userId: 'user-1',
  clientId: 'client-1',
  scopes: ['read_device', 'write_device'],
};

async function verifyWithJwks(signer: TokenSigner, token: string) {
  const jwks = createLocalJWKSet({ keys: [await signer.publicJwk()] });
  return jwtVerify(token, jwks, { issuer: request.issuer, audience: request.audience, typ: 'at+jwt' });
}

describe('access tokens', () => {
  it('carry the RFC 9068 claims and header', async () => {
    const signer = createLocalSigner(join(mkdtempSync(join(tmpdir(), 'key-')), 'k.pem'));
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
    const file = join(mkdtempSync(join(tmpdir(), 'key-')), 'nested', 'k.pem');

    const first = createLocalSigner(file);
    const second = createLocalSigner(file);

    expect(second.kid).toBe(first.kid);
    await expect(verifyWithJwks(second, await issueAccessToken(first, request))).resolves.toBeDefined();
  });

  it('names its key by the RFC 7638 thumbprint', async () => {
    const signer = createLocalSigner(join(mkdtempSync(join(tmpdir(), 'key-')), 'k.pem'));
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
