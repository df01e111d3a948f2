import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { toPublicJwk, type TokenSigner } from '#shared/auth/signer';

/**
 * Signs with an RSA key kept in a file, created on first use (local service and tests only;
 * in AWS the key lives in KMS). `kid` is the key's RFC 7638 thumbprint.
 */
export function createLocalSigner(keyFile: string): TokenSigner {
  const privateKey = loadOrCreateKey(keyFile);
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n })).digest('base64url');
  const publicJwk = toPublicJwk(jwk, kid);
  return {
    kid,
    sign: async (data) => sign('sha256', data, privateKey),
    publicJwk: async () => publicJwk,
  };
}

function loadOrCreateKey(keyFile: string): KeyObject {
  if (existsSync(keyFile)) return createPrivateKey(readFileSync(keyFile, 'utf8'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  mkdirSync(dirname(keyFile), { recursive: true });
  try {
    writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
    return privateKey;
  } catch (error) {
    // Another process created it first: use that one, so all agree on one key.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return createPrivateKey(readFileSync(keyFile, 'utf8'));
    throw error;
  }
}
