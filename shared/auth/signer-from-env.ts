import { ENV, optionalEnv, requireEnv } from '#shared/config';
import type { TokenSigner } from '#shared/auth/signer';

/** The signer this process is configured for: KMS when SIGNING_KEY_ID is set, else the local key file. */
export async function signerFromEnv(): Promise<TokenSigner> {
  const keyId = optionalEnv(ENV.signingKeyId);
  if (keyId) {
    // Only the KMS client and its two commands are bundled (named imports inside kms-signer).
    return (await import('#shared/auth/kms-signer')).kmsSignerFor(keyId);
  }
  const { createLocalSigner } = await import('#shared/auth/local-signer');
  return createLocalSigner(requireEnv(ENV.localSigningKeyFile));
}
