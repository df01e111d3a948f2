import type { RepoOperations } from '#shared/data/table-access';
import { queryAll, type RepoDeps } from '#shared/data/dynamodb';
import { factorsOfUserKey, passkeyHashOfKey, recoveryCodesKey, totpKey } from '#shared/data/item-keys';

// The account export's view of a user's second factors: apart from factor-repo.ts and
// passkey-repo.ts (which hold the secrets and the ceremonies) and from erasure-repo.ts (which the
// account's deletion bundles), so that neither the sign-in nor the deletion functions carry it.

/**
 * A user's second factors as the export shows them: whether an authenticator app is on (since
 * when), how many recovery codes are left, and the passkeys by what their owner sees of them. No
 * secret, public key, code hash or credential id.
 */
export interface FactorSummary {
  authenticatorApp?: { enrolledAt: string };
  recoveryCodesLeft: number;
  /** Oldest first. */
  passkeys: { name: string; createdAt: string; lastUsedAt?: string; backedUp: boolean }[];
}

export type FactorSummaryRepo = ReturnType<typeof createFactorSummaryRepo>;

export function createFactorSummaryRepo(deps: RepoDeps) {
  return {
    /**
     * The user's second factors, for the export: one Query of the factor prefix (per 1 MB page),
     * projected to what the summary shows (and the recovery codes' hashes, to count them), so no
     * secret or public key is read. An enrolment waiting for its first code and recovery codes
     * waiting to be shown (a page's few minutes, secrets only) are left out.
     */
    async factorsOf(userId: string): Promise<FactorSummary> {
      const { pk, skPrefix } = factorsOfUserKey(userId);
      const items = await queryAll(deps, {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ProjectionExpression: 'sk, enrolledAt, codes, #name, createdAt, lastUsedAt, backedUp', ExpressionAttributeNames: { '#name': 'name' },
      });
      const find = (sk: string) => items.find((item) => item.sk === sk);
      const app = find(totpKey(userId).sk);
      const codes = find(recoveryCodesKey(userId).sk)?.codes;
      return {
        ...(app ? { authenticatorApp: { enrolledAt: String(app.enrolledAt) } } : {}),
        recoveryCodesLeft: codes instanceof Set ? codes.size : 0,
        passkeys: items.filter((item) => passkeyHashOfKey({ sk: String(item.sk) }) !== undefined).map((item) => ({
          name: String(item.name), createdAt: String(item.createdAt), backedUp: item.backedUp === true,
          ...(item.lastUsedAt === undefined ? {} : { lastUsedAt: String(item.lastUsedAt) }),
        })).sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
      };
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const FACTOR_SUMMARY_REPO_OPERATIONS = {
  factorsOf: { actions: ['Query'] },
} as const satisfies RepoOperations<FactorSummaryRepo>;
