import type { RepoOperations } from '#shared/data/table-access';
import { TransactWriteCommand } from '#shared/data/commands';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { isCancelled, type RepoDeps } from '#shared/data/dynamodb';
import { recoveryCodesKey, recoveryRevealKey, totpKey } from '#shared/data/item-keys';
import { RECOVERY_REVEAL_SECONDS } from '#shared/data/factor-repo';

export type RecoveryCodeRepo = ReturnType<typeof createRecoveryCodeRepo>;

/**
 * The recovery codes of an account whose two-step sign-in is on, made anew without turning it off
 * (shared/accounts/recovery-codes.ts decides; the enrolment's first codes are FactorRepo.enrolTotp's).
 */
export function createRecoveryCodeRepo({ doc, table }: RepoDeps) {
  return {
    /**
     * Replaces the user's recovery codes: the new hashes in place of every code left (used or not,
     * the old ones stop working), and the new codes sealed for their one showing, in one
     * TransactWriteItems, on condition that the authenticator app is still on. False (nothing
     * written) when it is not.
     */
    async replaceRecoveryCodes(codes: { userId: string; recoveryCodeHashes: string[]; sealedCodes: string; now: Date }): Promise<boolean> {
      const { userId, recoveryCodeHashes, sealedCodes, now } = codes;
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { ConditionCheck: { TableName: table, Key: totpKey(userId), ConditionExpression: 'attribute_exists(pk)' } },
            { Put: { TableName: table, Item: { ...recoveryCodesKey(userId), codes: new Set(recoveryCodeHashes), createdAt: formatTimestamp(now) } } },
            { Put: { TableName: table, Item: { ...recoveryRevealKey(userId), sealed: sealedCodes, expiresAt: epochSeconds(now) + RECOVERY_REVEAL_SECONDS } } },
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error)) return false;
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const RECOVERY_CODE_REPO_OPERATIONS = {
  replaceRecoveryCodes: { actions: ['ConditionCheckItem', 'PutItem'], credential: true },
} as const satisfies RepoOperations<RecoveryCodeRepo>;
