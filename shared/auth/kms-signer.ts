import { createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import { toPublicJwk, type PublicJwk, type TokenSigner } from '#shared/auth/signer';

/** The part of the KMS client the signer uses, so tests can pass a stand-in that signs for real. */
export type KmsSend = Pick<KMSClient, 'send'>;

/** A signer for this KMS key, with a client configured from the Lambda environment. */
export function kmsSignerFor(keyId: string): TokenSigner {
  return createKmsSigner(observeClient(new KMSClient(awsClientConfig())), keyId);
}

/**
 * Signs with a KMS asymmetric key (RSA_2048, SIGN_VERIFY): only the digest input goes to KMS,
 * the private key never leaves it. `kid` is the key id, known without a network call, so module
 * load stays free of I/O; the public key is fetched once, on the first JWKS request.
 */
export function createKmsSigner(kms: KmsSend, keyId: string): TokenSigner {
  const kid = keyId.split('/').pop() ?? keyId;
  let publicJwk: Promise<PublicJwk> | undefined;
  return {
    kid,
    async sign(data) {
      const { Signature } = await kms.send(new SignCommand({
        KeyId: keyId,
        Message: data,
        MessageType: 'RAW',
        SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
      }));
      if (!Signature) throw new Error('KMS returned no signature');
      return Signature;
    },
    publicJwk() {
      publicJwk ??= kms.send(new GetPublicKeyCommand({ KeyId: keyId })).then(({ PublicKey }) => {
        if (!PublicKey) throw new Error('KMS returned no public key');
        return toPublicJwk(createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' }), kid);
      });
      publicJwk.catch(() => { publicJwk = undefined; });
      return publicJwk;
    },
  };
}
