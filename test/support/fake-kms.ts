import { generateKeyPairSync, sign } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import type { KmsSend } from '#shared/auth/kms-signer';

/**
 * A stand-in for KMS (no local engine exists) that does the real cryptography: an RSA-2048 key
 * pair held here, RSASSA_PKCS1_V1_5_SHA_256 signatures over the raw message, SPKI public key.
 */
export function createFakeKms() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const calls: string[] = [];
  const kms: KmsSend = {
    send: (async (command: unknown) => {
      if (command instanceof SignCommand) {
        calls.push('Sign');
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
  return { kms, calls, publicKey };
}
