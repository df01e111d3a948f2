import { CreateAliasCommand, CreateKeyCommand, KMSClient, ScheduleKeyDeletionCommand, UpdateAliasCommand } from '@aws-sdk/client-kms';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import { kmsSignerSource, type KmsSend } from '#shared/auth/kms-signer';
import type { SigningKeyStore } from '#shared/auth/signing-keys';

/**
 * The tag that marks a stack's signing keys, valued with the stack's name. The functions' roles are
 * granted kms:Sign, kms:GetPublicKey and (the rotation) kms:ScheduleKeyDeletion on keys with this tag
 * only, so keys a rotation creates are usable without a redeploy, and nothing else is.
 */
export const SIGNING_KEY_TAG_KEY = 'device-user-service:signing-key';
/** KMS keeps a key this long after ScheduleKeyDeletion (the longest window KMS offers: time to cancel a mistake). */
export const KEY_DELETION_WINDOW_DAYS = 30;

export interface KmsKeyStoreOptions {
  /** The stack's own key (SIGNING_KEY_ID). */
  initialKeyId: string;
  /** Value of SIGNING_KEY_TAG_KEY on every key this store creates. */
  tagValue: string;
  /** `alias/<stack>-signing`: the aliases are `<prefix>-current` and `<prefix>-next`. */
  aliasPrefix: string;
}

/** The signing keys in KMS, for the rotation function: CreateKey with the tag, ScheduleKeyDeletion, and the two aliases. */
export function createKmsKeyStore(options: KmsKeyStoreOptions, kms: KmsSend = observeClient(new KMSClient(awsClientConfig()))): SigningKeyStore {
  const source = kmsSignerSource(options.initialKeyId, kms);
  const pointAlias = async (name: string, target: string) => {
    const AliasName = `${options.aliasPrefix}-${name}`;
    try {
      await kms.send(new UpdateAliasCommand({ AliasName, TargetKeyId: target }));
    } catch (error) {
      if ((error as Error).name !== 'NotFoundException') throw error;
      await kms.send(new CreateAliasCommand({ AliasName, TargetKeyId: target }));
    }
  };
  return {
    ...source,
    async createKey() {
      const { KeyMetadata } = await kms.send(new CreateKeyCommand({
        KeySpec: 'RSA_2048',
        KeyUsage: 'SIGN_VERIFY',
        Description: 'Signs the access tokens of the Device and User Service (RS256); created by a signing-key rotation',
        Tags: [{ TagKey: SIGNING_KEY_TAG_KEY, TagValue: options.tagValue }],
      }));
      if (!KeyMetadata?.Arn) throw new Error('KMS returned no key');
      return KeyMetadata.Arn;
    },
    async deleteKey(ref) {
      try {
        await kms.send(new ScheduleKeyDeletionCommand({ KeyId: ref, PendingWindowInDays: KEY_DELETION_WINDOW_DAYS }));
      } catch (error) {
        // Already pending deletion (an earlier step failed after scheduling it) or gone: done.
        if (!['KMSInvalidStateException', 'NotFoundException'].includes((error as Error).name)) throw error;
      }
    },
    async pointAliases({ current, next }) {
      await pointAlias('current', current);
      if (next) await pointAlias('next', next);
    },
  };
}
