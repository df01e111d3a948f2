import { UpdateCommand } from '#shared/data/commands';
import { hashSecret, randomToken } from '#shared/secrets';
import type { BatchRead } from '#shared/data/batch-read';
import type { RepoOperations } from '#shared/data/table-access';
import { isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { knownBrowserKey } from '#shared/data/item-keys';

// Known browsers (OWASP's device cookie): a browser that signed in to an account keeps signing in
// whatever others try, within failures of its own. A repository of its own beside the login throttle
// (throttle-repo.ts), so that a function that only confirms a password does not bundle it.

/** A known browser (OWASP's "device cookie"): the account it signed in to and its failures since. */
export interface KnownBrowser {
  userId: string;
  failures: number;
}

/** A known-browser cookie is a 256-bit random token, base64url; anything else is not ours and reads nothing. */
const KNOWN_BROWSER_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export type KnownBrowserRepo = ReturnType<typeof createKnownBrowserRepo>;

/** Known browsers, in TTL items; one past its TTL that DynamoDB has not deleted yet is unknown. */
export function createKnownBrowserRepo({ doc, table }: RepoDeps) {
  const seconds = (ms: number) => Math.floor(ms / 1000);
  return {
    /** The live known browser of a cookie value, as part of a combined read; a value not of our shape reads nothing. */
    knownBrowserRead(token: string | undefined, now: number): BatchRead<KnownBrowser | undefined> {
      // Stryker disable next-line ConditionalExpression: an absent value fails the pattern too (as the string 'undefined')
      if (token === undefined || !KNOWN_BROWSER_TOKEN.test(token)) return { keys: [], parse: () => undefined };
      return {
        keys: [knownBrowserKey(hashSecret(token))],
        parse: ([item]) => (item && Number(item.expiresAt) > seconds(now)
          ? { userId: String(item.userId), failures: Number(item.failures ?? 0) }
          : undefined),
      };
    },

    /**
     * Reserves one failure on a known browser of `userId` that is live and below `limit` failures:
     * one UpdateItem. False (nothing written) when it is not, or no longer, such a browser.
     */
    async reserveKnownBrowser(token: string, userId: string, limit: number, now: number): Promise<boolean> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: knownBrowserKey(hashSecret(token)),
          UpdateExpression: 'ADD failures :one',
          ConditionExpression: 'userId = :user AND expiresAt > :nowSeconds AND failures < :limit',
          ExpressionAttributeValues: { ':one': 1, ':user': userId, ':nowSeconds': seconds(now), ':limit': limit },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** A new known browser of `userId`: the cookie value (never stored) and the transaction item that stores its hash. */
    newKnownBrowser(userId: string, ttlSeconds: number, now: number): { token: string; item: TransactItem } {
      const token = randomToken();
      const Item = { ...knownBrowserKey(hashSecret(token)), userId, failures: 0, expiresAt: seconds(now) + ttlSeconds };
      return { token, item: { Put: { TableName: table, Item } } };
    },

    /** The transaction item that forgets the known browser of a cookie value (replaced at a login). */
    forgetKnownBrowserItem(token: string): TransactItem {
      return { Delete: { TableName: table, Key: knownBrowserKey(hashSecret(token)) } };
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const KNOWN_BROWSER_REPO_OPERATIONS = {
  knownBrowserRead: { actions: ['BatchGetItem'] },
  reserveKnownBrowser: { actions: ['UpdateItem'] },
  newKnownBrowser: { actions: ['PutItem'] },
  forgetKnownBrowserItem: { actions: ['DeleteItem'] },
} as const satisfies RepoOperations<KnownBrowserRepo>;
