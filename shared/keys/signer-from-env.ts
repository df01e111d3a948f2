import { kmsSignerSource } from '#shared/keys/kms-signer';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import { type SignerSource } from '#shared/keys/schedule';
import { ENV, optionalEnv, requireEnv } from '#shared/config';
import type { RepoDeps } from '#shared/data/dynamodb';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { createKeyring, type Keyring } from '#shared/keys/keyring';

/**
 * The signing keys this process is configured for: KMS when SIGNING_KEY_ID is set (the deployed key;
 * rotations add others), else the local key files. Static imports (not `import()`) let esbuild keep
 * only the KMS client and its two commands. No network call at load: a key's id is its `kid`, and
 * public keys are fetched on first use.
 */
export function signerSourceFromEnv(): SignerSource {
  const keyId = optionalEnv(ENV.signingKeyId);
  return keyId ? kmsSignerSource(keyId) : createLocalKeyStore(requireEnv(ENV.localSigningKeyFile));
}

/** The keyring of a function: the schedule in the table (shared/keys/schedule.ts), over the configured keys. */
export function keyringFromEnv(table: RepoDeps): Keyring {
  return createKeyring({ repo: createSigningKeyRepo(table), source: signerSourceFromEnv() });
}
