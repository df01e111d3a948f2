import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createBatchReader, type BatchRead } from '#shared/data/batch-read';
import type { RepoDeps } from '#shared/data/client';
import { throttleKey } from '#shared/data/keys';

export interface FailureRecord {
  kind: 'account' | 'address';
  failures: number;
  /** Epoch milliseconds of the last failure. */
  lastFailureAt: number;
}

export type ThrottleRepo = ReturnType<typeof createThrottleRepo>;

/** Counts failed logins per account and per client address (TTL items that forget after a day). */
export function createThrottleRepo({ doc, table }: RepoDeps) {
  /** The records of an account and of an address that exist, as part of a combined read. */
  const failuresRead = (account: string, address: string): BatchRead<FailureRecord[]> => {
    const kinds = ['account', 'address'] as const;
    return {
      keys: [throttleKey('account', account), throttleKey('address', address)],
      parse: (items) => items.flatMap((item, i) =>
        (item ? [{ kind: kinds[i]!, failures: Number(item.failures), lastFailureAt: Number(item.lastFailureAt) }] : [])),
    };
  };
  const batch = createBatchReader({ doc, table });

  return {
    failuresRead,

    /** Both records in one BatchGetItem. */
    async getFailures(account: string, address: string): Promise<FailureRecord[]> {
      const [records] = await batch.read([failuresRead(account, address)]);
      return records;
    },

    async recordFailure(account: string, address: string, now: number): Promise<void> {
      await Promise.all([throttleKey('account', account), throttleKey('address', address)].map((Key) =>
        doc.send(new UpdateCommand({
          TableName: table,
          Key,
          UpdateExpression: 'ADD failures :one SET lastFailureAt = :now, expiresAt = :expires',
          ExpressionAttributeValues: { ':one': 1, ':now': now, ':expires': Math.floor(now / 1000) + 86_400 },
        }))));
    },

    async clearAccount(account: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: throttleKey('account', account) }));
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const THROTTLE_REPO_NEEDS = {
  failuresRead: { actions: ['BatchGetItem'] },
  getFailures: { actions: ['BatchGetItem'] },
  recordFailure: { actions: ['UpdateItem'] },
  clearAccount: { actions: ['DeleteItem'] },
} as const satisfies RepoNeeds<ThrottleRepo>;
