import { kmsSignerFor } from '#shared/auth/kms-signer';
import { createLocalSigner } from '#shared/auth/local-signer';
import type { TokenSigner } from '#shared/auth/signer';
import { ENV, optionalEnv, requireEnv } from '#shared/config';

/**
 * The signer this process is configured for: KMS when SIGNING_KEY_ID is set, else the local key
 * file. Static imports (not `import()`) let esbuild keep only the KMS client and its two commands.
 * No network call: the KMS key id is the `kid`, and the public key is fetched on first use.
 */
export async function signerFromEnv(): Promise<TokenSigner> {
  const keyId = optionalEnv(ENV.signingKeyId);
  return keyId ? kmsSignerFor(keyId) : createLocalSigner(requireEnv(ENV.localSigningKeyFile));
}
