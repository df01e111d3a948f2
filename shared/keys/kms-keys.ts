import {
  CreateAliasCommand, CreateKeyCommand, DeleteAliasCommand, KMSClient, PutKeyPolicyCommand, ScheduleKeyDeletionCommand, UpdateAliasCommand,
} from '@aws-sdk/client-kms';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import { kmsSignerSource, type KmsSend } from '#shared/keys/kms-signer';
import type { SigningKeyStore } from '#shared/keys/schedule';

/**
 * The tag on the stack's own signing key, valued with the name of this deployment of the stack
 * (`<stack name>/<unique part of its stack id>`): it says whose key it is, and grants nothing.
 */
export const SIGNING_KEY_TAG_KEY = 'device-user-service:signing-key';
/** KMS keeps a key this long after ScheduleKeyDeletion (the longest window KMS offers: time to cancel a mistake). */
export const KEY_DELETION_WINDOW_DAYS = 30;

export interface KmsKeyStoreOptions {
  /** The stack's own key (SIGNING_KEY_ID). */
  initialKeyId: string;
  /** The key policy of every key this store creates or re-applies (SIGNING_KEY_POLICY, rendered by the stack). */
  keyPolicy: string;
  /** The name of this deployment of the stack (SIGNING_KEY_TAG), written into each created key's description. */
  owner: string;
  /** `alias/<stack>-signing`: the aliases are `<prefix>-current` and `<prefix>-next`. */
  aliasPrefix: string;
}

const ALIAS_NAMES = ['current', 'next'] as const;

/**
 * The signing keys in KMS, for the rotation function: CreateKey with the stack's key policy (and no
 * tags), PutKeyPolicy of that policy on a key created earlier, ScheduleKeyDeletion, and the two aliases.
 */
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
        Description: `Signs the access tokens of the Device and User Service (RS256) of ${options.owner}; created by a signing-key rotation`,
        Policy: options.keyPolicy,
        // The policy does not let the rotation change it later, which is the point: the account's
        // administrators manage the key through its first statement (the account), as with a default policy.
        BypassPolicyLockoutSafetyCheck: true,
      }));
      if (!KeyMetadata?.Arn || !KeyMetadata.KeyId) throw new Error('KMS returned no key');
      return { ref: KeyMetadata.Arn, kid: KeyMetadata.KeyId };
    },
    async applyKeyPolicy(ref) {
      // The same policy as at CreateKey: it names the roles of this deployment, which may have been
      // replaced since the key was created (a role's new ARN), or the key may predate it.
      try {
        await kms.send(new PutKeyPolicyCommand({ KeyId: ref, Policy: options.keyPolicy, BypassPolicyLockoutSafetyCheck: true }));
      } catch (error) {
        // Pending deletion or gone: no one signs with it any more, and its policy no longer matters.
        if (!['KMSInvalidStateException', 'NotFoundException'].includes((error as Error).name)) throw error;
      }
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
    async deleteAliases() {
      for (const name of ALIAS_NAMES) {
        try {
          await kms.send(new DeleteAliasCommand({ AliasName: `${options.aliasPrefix}-${name}` }));
        } catch (error) {
          if ((error as Error).name !== 'NotFoundException') throw error;
        }
      }
    },
  };
}
