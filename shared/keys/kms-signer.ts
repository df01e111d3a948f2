import { createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import { SigningUnavailableError, type TokenSigner } from '#shared/keys/signer';
import type { SignerSource } from '#shared/keys/schedule';
import { toPublicJwk, type PublicJwk } from '#shared/domain/jwk';
import { countMetric, METRIC } from '#shared/metrics';

/** The part of the KMS client the signer uses, so tests can pass a stand-in that signs for real. */
export type KmsSend = Pick<KMSClient, 'send'>;

/**
 * Signers for KMS keys by key id or ARN, over one client: the deployed key (SIGNING_KEY_ID) and the
 * ones rotations created. Each signer fetches its public key once.
 */
export function kmsSignerSource(initialKeyId: string, client: KmsSend = observeClient(new KMSClient(awsClientConfig()))): SignerSource {
  const signers = new Map<string, TokenSigner>();
  return {
    initialRef: initialKeyId,
    signerFor(ref) {
      let signer = signers.get(ref);
      if (!signer) {
        signer = createKmsSigner(client, ref);
        signers.set(ref, signer);
      }
      return signer;
    },
  };
}

/**
 * Signs with a KMS asymmetric key (RSA_2048, SIGN_VERIFY): only the digest input goes to KMS,
 * the private key never leaves it. `kid` is the key id, known without a network call, so module
 * load stays free of I/O; the public key is fetched once, on the first JWKS request.
 *
 * A failure worth retrying (see isTransientKmsError) becomes a SigningUnavailableError; any other
 * (denied, missing or disabled key, wrong key usage) stays an error of this code's configuration.
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
      })).catch((error: unknown) => {
        throw classify(error, 'kms:Sign');
      });
      if (!Signature) throw new Error('KMS returned no signature');
      return Signature;
    },
    publicJwk() {
      publicJwk ??= kms.send(new GetPublicKeyCommand({ KeyId: keyId })).then(({ PublicKey }) => {
        if (!PublicKey) throw new Error('KMS returned no public key');
        return toPublicJwk(createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' }), kid);
      }, (error: unknown) => {
        throw classify(error, 'kms:GetPublicKey');
      });
      publicJwk.catch(() => { publicJwk = undefined; });
      return publicJwk;
    },
  };

  /** Every failure counts in KmsErrors (KMS publishes no error metric of a key): the KMS alarm watches it. */
  function classify(error: unknown, action: string): Error {
    countMetric(METRIC.kmsErrors);
    if (isTransientKmsError(error)) return new SigningUnavailableError(error);
    return new Error(`${action} failed for key ${kid}`, { cause: error });
  }
}

/** KMS and SDK error names that mean "try again shortly" rather than "misconfigured". */
const TRANSIENT_NAMES = new Set([
  'ThrottlingException', // the account's KMS request quota
  'KMSInternalException',
  'DependencyTimeoutException',
  'KeyUnavailableException',
  'InternalFailure',
  'ServiceUnavailable',
  // The SDK's own: a connection or request timeout of its HTTP handler, or an aborted request.
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);
/** Node network errors: the connection failed, not the request. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * True for a KMS failure a retry can cure: throttling, KMS's own trouble, the network. Judged by
 * the error's name, code and HTTP status only, so nothing here needs the SDK's classes. Access
 * denied, a missing, disabled or pending-deletion key and a wrong key usage are not: retrying them
 * cannot help, they are a deployment bug.
 */
export function isTransientKmsError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, $metadata, $retryable } = error as { code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  const status = $metadata?.httpStatusCode ?? 0;
  return TRANSIENT_NAMES.has(error.name) || (code !== undefined && TRANSIENT_CODES.has(code))
    || status === 429 || status >= 500 || $retryable !== undefined;
}
