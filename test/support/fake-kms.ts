import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { GetPublicKeyCommand, KMSServiceException, SignCommand } from '@aws-sdk/client-kms';
import type { KmsSend } from '#shared/auth/kms-signer';

/** HTTP status and fault KMS answers each error name with (AWS KMS API reference, "Errors"). */
const ERROR_SHAPES: Record<string, { status: number; fault: 'client' | 'server'; message: string }> = {
  ThrottlingException: { status: 400, fault: 'client', message: 'Rate exceeded' },
  KMSInternalException: { status: 500, fault: 'server', message: 'An internal error occurred.' },
  AccessDeniedException: { status: 400, fault: 'client', message: 'User is not authorized to perform: kms:Sign' },
  DisabledException: { status: 400, fault: 'client', message: 'The key is disabled.' },
};

/**
 * A stand-in for KMS (no local engine exists) that does the real cryptography: an RSA-2048 key
 * pair held here, RSASSA_PKCS1_V1_5_SHA_256 signatures over the raw message, SPKI public key.
 * `failSign` makes the next kms:Sign calls fail the way the SDK reports a service error after its
 * retries: a KMSServiceException with that name, `$fault` and `$metadata`.
 */
export function createFakeKms() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const calls: string[] = [];
  let failures: { name: string; left: number } | undefined;
  const kms: KmsSend = {
    send: (async (command: unknown) => {
      if (command instanceof SignCommand) {
        calls.push('Sign');
        if (failures && failures.left > 0) {
          failures.left--;
          throw serviceError(failures.name);
        }
        const { Message, MessageType, SigningAlgorithm } = command.input;
        if (MessageType !== 'RAW' || SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_256' || !Message) {
          throw new Error('ValidationException');
        }
        return { Signature: new Uint8Array(sign('sha256', Message, privateKey)) };
      }
      if (command instanceof GetPublicKeyCommand) {
        calls.push('GetPublicKey');
        return { PublicKey: new Uint8Array(publicKey.export({ format: 'der', type: 'spki' })) };
      }
      throw new Error(`unexpected command ${String(command)}`);
    }) as KmsSend['send'],
  };
  return {
    kms,
    calls,
    publicKey,
    /** The next `times` kms:Sign calls fail with the KMS error `name` (default: throttling). */
    failSign(times: number, name: keyof typeof ERROR_SHAPES = 'ThrottlingException') {
      failures = { name, left: times };
    },
  };
}

function serviceError(name: string): KMSServiceException {
  const shape = ERROR_SHAPES[name]!;
  return new KMSServiceException({
    name,
    $fault: shape.fault,
    message: shape.message,
    $metadata: { httpStatusCode: shape.status, requestId: randomUUID(), attempts: 3, totalRetryDelay: 350 },
  });
}
