import { PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { hashSecret, randomToken } from '#shared/secrets';
import { epochSeconds } from '#shared/domain/time';
import type { BatchRead } from '#shared/data/batch-read';
import type { RepoDeps, TransactItem } from '#shared/data/dynamodb';
import { pendingSignInKey } from '#shared/data/item-keys';

// The sign-ins whose password was right, waiting for their second factor (TTL items). Part of the
// factor repository (factor-repo.ts), which declares what each operation sends.

/** How long a sign-in whose password was right waits for its second factor. */
export const PENDING_SIGN_IN_SECONDS = 5 * 60;

/**
 * A pending sign-in's cookie is `<user id>.<256-bit random token>`, like a session's: the id lets the
 * second-factor page read the sign-in, the user's factors and the throttle record in one
 * BatchGetItem; only the hash of the whole value is stored, and the item must name the same user.
 */
const PENDING_SIGN_IN = /^([0-9A-Za-z-]{1,64})\.[0-9A-Za-z_-]{43}$/;

/** The user id a pending sign-in's cookie claims, if it has our shape. */
// Stryker disable next-line ConditionalExpression: an absent value fails the pattern too (as the string 'undefined')
export const pendingSignInUserId = (token: string | undefined): string | undefined => (token === undefined ? undefined : PENDING_SIGN_IN.exec(token)?.[1]);

/** The pending sign-in operations of the factor repository (createFactorRepo). */
export function createPendingSignInOperations({ doc, table }: RepoDeps) {
  return {
    /**
     * Starts a sign-in that waits for its second factor; returns the cookie value (never stored).
     * One PutItem, or with `alsoWrite` (the login's throttle credits) one TransactWriteItems.
     */
    async startPendingSignIn(userId: string, now: Date, alsoWrite: readonly TransactItem[] = []): Promise<string> {
      const token = `${userId}.${randomToken()}`;
      const put = { TableName: table, Item: { ...pendingSignInKey(hashSecret(token)), userId, expiresAt: epochSeconds(now) + PENDING_SIGN_IN_SECONDS } };
      if (alsoWrite.length === 0) await doc.send(new PutCommand(put));
      else await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, ...alsoWrite] }));
      return token;
    },

    /** The user of a live pending sign-in, as part of a combined read; a value not of our shape reads nothing. */
    pendingSignInRead(token: string | undefined, now: Date): BatchRead<string | undefined> {
      const userId = pendingSignInUserId(token);
      if (!userId) return { keys: [], parse: () => undefined };
      return {
        keys: [pendingSignInKey(hashSecret(token!))],
        parse: ([item]) => (item && item.userId === userId && Number(item.expiresAt) > epochSeconds(now) ? userId : undefined),
      };
    },

    /** The transaction item that ends a pending sign-in: it must still be there and live, so it completes once. */
    endPendingSignInItem(token: string, now: Date): TransactItem {
      return {
        Delete: {
          TableName: table, Key: pendingSignInKey(hashSecret(token)), ConditionExpression: 'expiresAt > :now',
          ExpressionAttributeValues: { ':now': epochSeconds(now) },
        },
      };
    },
  };
}
