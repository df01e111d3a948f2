import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { UserCode } from '#shared/domain/device-authorization';
import { epochSeconds } from '#shared/domain/time';
import { cancellationCodes, isCancelled, type RepoDeps } from '#shared/data/dynamodb';
import { fromItem, userCodeEntriesKey, userCodeKey } from '#shared/data/item-keys';

// The user codes of the device flow (RFC 8628) as the /device page meets them: a code's item read,
// and every entry counted per account and address before any lookup. Part of the device grant
// repository (device-grant-repo.ts), which declares what each operation sends.

/** The user-code operations of the device grant repository (createDeviceGrantRepo). */
export function createUserCodeOperations({ doc, table }: RepoDeps) {
  return {
    /** A user code's item (one GetItem, consistent); expired ones are the caller's to refuse. */
    async getUserCode(userCodeHash: string): Promise<UserCode | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: userCodeKey(userCodeHash), ConsistentRead: true }));
      return Item ? fromItem<UserCode>(Item) : undefined;
    },

    /**
     * Counts one user code entry of `userId` from `address` in the current window, if both are below
     * their limits: one transaction of two conditional updates, so of concurrent entries at most the
     * limit pass, and a refused entry counts nowhere. Says whether it was counted.
     */
    async countUserCodeEntry(userId: string, address: string, limits: { account: number; address: number; windowSeconds: number }, now: Date): Promise<boolean> {
      const windowStart = epochSeconds(now) - (epochSeconds(now) % limits.windowSeconds);
      const count = (key: ReturnType<typeof userCodeEntriesKey>, max: number) => ({
        Update: {
          TableName: table, Key: key,
          UpdateExpression: 'ADD entries :one SET expiresAt = :end',
          ConditionExpression: 'attribute_not_exists(entries) OR entries < :max',
          ExpressionAttributeValues: { ':one': 1, ':end': windowStart + limits.windowSeconds, ':max': max },
        },
      });
      for (let attempt = 0; ; attempt++) {
        try {
          await doc.send(new TransactWriteCommand({
            TransactItems: [
              count(userCodeEntriesKey('account', userId, windowStart), limits.account),
              count(userCodeEntriesKey('address', address, windowStart), limits.address),
            ],
          }));
          return true;
        } catch (error) {
          if (!isCancelled(error)) throw error;
          const codes = cancellationCodes(error);
          if (codes.includes('ConditionalCheckFailed')) return false;
          // Only collided with a concurrent entry on the same counters: count again (each retry is counted once).
          if (attempt >= 4) throw error;
          // Stryker disable next-line ArithmeticOperator: a jittered pause before counting again; its length changes no outcome
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
        }
      }
    },
  };
}
