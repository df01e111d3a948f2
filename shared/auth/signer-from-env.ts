import { ENV, optionalEnv, requireEnv } from '#shared/config';
import type { TokenSigner } from '#shared/auth/signer';

/** The signer this process is configured for: KMS when SIGNING_KEY_ID is set, else the local key file. */
export async function signerFromEnv(): Promise<TokenSigner> {
  const keyId = optionalEnv(ENV.signingKeyId);
  if (keyId) {
    const [{ KMSClient }, { createKmsSigner }] = await Promise.all([
      import('@aws-sdk/client-kms'),
      import('#shared/auth/kms-signer'),
    ]);
    return createKmsSigner(new KMSClient({}), keyId);
  }
  const { createLocalSigner } = await import('#shared/auth/local-signer');
  return createLocalSigner(requireEnv(ENV.localSigningKeyFile));
}
