import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createBatchReader, type BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { throttleKey } from '#shared/data/keys';

/** How long failed logins are remembered: a record lives this long after its last failure (TTL). */
export const THROTTLE_MEMORY_SECONDS = 86_400;

export interface FailureRecord {
  kind: 'account' | 'address';
  failures: number;
  /** Epoch milliseconds of the last failure. */
  lastFailureAt: number;
}

export type ThrottleRepo = ReturnType<typeof createThrottleRepo>;

/**
 * Counts failed logins per account and per client address, in TTL items that forget a day after
 * the last failure. DynamoDB deletes them late, so a record past its TTL counts as absent: it is
 * not read, and the next failure starts it again from one.
 */
export function createThrottleRepo({ doc, table }: RepoDeps) {
  /** The live records of an account and of an address, as part of a combined read. `now` in epoch milliseconds. */
  const failuresRead = (account: string, address: string, now = Date.now()): BatchRead<FailureRecord[]> => {
    const kinds = ['account', 'address'] as const;
    return {
      keys: [throttleKey('account', account), throttleKey('address', address)],
      parse: (items) => items.flatMap((item, i) =>
        (item && Number(item.expiresAt) > Math.floor(now / 1000)
          ? [{ kind: kinds[i]!, failures: Number(item.failures), lastFailureAt: Number(item.lastFailureAt) }]
          : [])),
    };
  };
  const batch = createBatchReader({ doc, table });

  /**
   * One more failure on a record: one UpdateItem, conditioned on the record being live (or new). A
   * record past its TTL is started again from one by a second UpdateItem (only then).
   */
  async function recordOn(Key: Record<string, string>, now: number): Promise<void> {
    const values = { ':one': 1, ':now': now, ':expires': Math.floor(now / 1000) + THROTTLE_MEMORY_SECONDS, ':nowSeconds': Math.floor(now / 1000) };
    try {
      await doc.send(new UpdateCommand({
        TableName: table,
        Key,
        UpdateExpression: 'ADD failures :one SET lastFailureAt = :now, expiresAt = :expires',
        ConditionExpression: 'attribute_not_exists(expiresAt) OR expiresAt > :nowSeconds',
        ExpressionAttributeValues: values,
      }));
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      await doc.send(new UpdateCommand({
        TableName: table,
        Key,
        UpdateExpression: 'SET failures = :one, lastFailureAt = :now, expiresAt = :expires',
        // Another failure may have started it again meanwhile: then that one stands.
        ConditionExpression: 'expiresAt <= :nowSeconds',
        ExpressionAttributeValues: values,
      })).catch((again: unknown) => {
        if (!isConditionalCheckFailed(again)) throw again;
      });
    }
  }

  return {
    failuresRead,

    /** Both records in one BatchGetItem. */
    async getFailures(account: string, address: string, now = Date.now()): Promise<FailureRecord[]> {
      const [records] = await batch.read([failuresRead(account, address, now)]);
      return records;
    },

    /** Records a failure on both records: two UpdateItems (in parallel). `now` in epoch milliseconds. */
    async recordFailure(account: string, address: string, now: number): Promise<void> {
      await Promise.all([throttleKey('account', account), throttleKey('address', address)].map((key) => recordOn(key, now)));
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
