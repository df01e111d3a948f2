import { GetCommand, TransactWriteCommand } from '#shared/data/commands';
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
     * their limits (countEntries). Says whether it was counted.
     */
    countUserCodeEntry(userId: string, address: string, limits: EntryLimits, now: Date): Promise<boolean> {
      return countEntries({ doc, table }, (scope, subject, windowStart) => userCodeEntriesKey(scope, subject, windowStart), userId, address, limits, now);
    },
  };
}

/**
 * How many times an entry is sent when it only collides with concurrent ones on the same counters:
 * thirty entries at once (a guessing script) collide in turns, and nine tries, jittered, let each be
 * counted or refused.
 */
export const ENTRY_COUNT_TRIES = 9;

/** How many entries one account and one address may make per window. */
export interface EntryLimits { account: number; address: number; windowSeconds: number }

/**
 * Counts one entry of a code (a user code of the device flow, a device's claim code) by `userId`
 * from `address` in the current window, if both counters are below their limits: one transaction of
 * two conditional updates, so of concurrent entries at most the limit pass, and a refused entry
 * counts nowhere. `keyOf` names the counters' items. Says whether it was counted.
 */
export async function countEntries(
  { doc, table }: RepoDeps, keyOf: (scope: 'account' | 'address', subject: string, windowStart: number) => Record<string, string>,
  userId: string, address: string, limits: EntryLimits, now: Date,
): Promise<boolean> {
  const windowStart = epochSeconds(now) - (epochSeconds(now) % limits.windowSeconds);
  const count = (key: Record<string, string>, max: number) => ({
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
        TransactItems: [count(keyOf('account', userId, windowStart), limits.account), count(keyOf('address', address, windowStart), limits.address)],
      }));
      return true;
    } catch (error) {
      if (!isCancelled(error)) throw error;
      const codes = cancellationCodes(error);
      if (codes.includes('ConditionalCheckFailed')) return false;
      // Only collided with a concurrent entry on the same counters: count again (each retry is counted once).
      if (attempt >= ENTRY_COUNT_TRIES - 1) throw error;
      // Stryker disable next-line ArithmeticOperator: a jittered pause before counting again; its length changes no outcome
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
    }
  }
}
