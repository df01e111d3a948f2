import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { TokenSigner } from '#shared/keys/signer';
import type { SigningKeyStore } from '#shared/keys/schedule';
import { toPublicJwk } from '#shared/domain/jwk';

/**
 * Signs with an RSA key kept in a file, created on first use (local service and tests only;
 * in AWS the key lives in KMS). `kid` is the key's RFC 7638 thumbprint.
 */
export function createLocalSigner(keyFile: string, { create = true } = {}): TokenSigner {
  if (!create && !existsSync(keyFile)) throw new Error(`No signing key file ${keyFile}`);
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

/**
 * The local signing keys: the key file of the service (`signing-key.pem`, created on first use) and
 * the ones rotations created next to it (`signing-key-<uuid>.pem`); a key's reference is its file name.
 */
export function createLocalKeyStore(initialKeyFile: string): SigningKeyStore {
  const dir = dirname(initialKeyFile);
  const initialRef = basename(initialKeyFile);
  const signers = new Map<string, TokenSigner>();
  return {
    initialRef,
    signerFor(ref) {
      if (basename(ref) !== ref) throw new Error(`Not a key file name: ${ref}`);
      let signer = signers.get(ref);
      if (!signer) {
        // Only the service's own key is created on demand: a rotated key that is gone stays gone.
        signer = createLocalSigner(join(dir, ref), { create: ref === initialRef });
        signers.set(ref, signer);
      }
      return signer;
    },
    async createKey() {
      const ref = `signing-key-${randomUUID()}.pem`;
      return { ref, kid: createLocalSigner(join(dir, ref)).kid };
    },
    async deleteKey(ref) {
      signers.delete(ref);
      rmSync(join(dir, basename(ref)), { force: true });
    },
  };
}
