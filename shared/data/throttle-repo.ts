import { BatchGetCommand, DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RepoDeps } from '#shared/data/client';
import { throttleKey } from '#shared/data/keys';

export interface FailureRecord {
  failures: number;
  /** Epoch milliseconds of the last failure. */
  lastFailureAt: number;
}

export type ThrottleRepo = ReturnType<typeof createThrottleRepo>;

/** Counts failed logins per account and per client address (TTL items that forget after a day). */
export function createThrottleRepo({ doc, table }: RepoDeps) {
  return {
    /** Both records in one BatchGetItem. */
    async getFailures(account: string, address: string): Promise<FailureRecord[]> {
      const keys = [throttleKey('account', account), throttleKey('address', address)];
      const { Responses } = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys } } }));
      return (Responses?.[table] ?? []).map((item) => ({ failures: Number(item.failures), lastFailureAt: Number(item.lastFailureAt) }));
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
