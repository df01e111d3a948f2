import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { RepoDeps } from '#shared/data/client';
import { linkKey, userKey } from '#shared/data/keys';

export type LinkPurpose = 'confirm-email' | 'reset-password';

/** How long an e-mailed link works. */
export const LINK_TTL_SECONDS: Record<LinkPurpose, number> = {
  'confirm-email': 24 * 3600,
  'reset-password': 3600,
};

export type LinkRepo = ReturnType<typeof createLinkRepo>;

/**
 * Single-use e-mailed links (e-mail confirmation, password reset), stored under the hash of
 * their token with a TTL; expiry is also checked on every read.
 */
export function createLinkRepo({ doc, table }: RepoDeps) {
  return {
    /** Creates a link for the user; returns the token to put in the e-mail (never stored). */
    async createLink(purpose: LinkPurpose, userId: string, now = new Date()): Promise<string> {
      const token = randomToken();
      await doc.send(new PutCommand({
        TableName: table,
        Item: { ...linkKey(hashSecret(token)), purpose, userId, expiresAt: epochSeconds(now) + LINK_TTL_SECONDS[purpose] },
      }));
      return token;
    },

    /** The user a live link of this purpose belongs to, without using it up. One GetItem. */
    async peekLink(purpose: LinkPurpose, token: string, now = new Date()): Promise<string | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: linkKey(hashSecret(token)), ConsistentRead: true }));
      if (!Item || Item.purpose !== purpose || Number(Item.expiresAt) <= epochSeconds(now)) return undefined;
      return String(Item.userId);
    },

    /**
     * Uses up the link and applies `changes` to its user in one transaction: either both happen
     * or neither. Returns false when the link is unknown, expired, of another purpose or used.
     */
    async redeemLink(purpose: LinkPurpose, token: string, changes: Record<string, unknown>, now = new Date()): Promise<boolean> {
      const userId = await this.peekLink(purpose, token, now);
      if (!userId) return false;
      const entries = Object.entries({ ...changes, update_date: formatTimestamp(now) });
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: table,
                Key: linkKey(hashSecret(token)),
                ConditionExpression: 'purpose = :purpose AND userId = :user AND expiresAt > :now',
                ExpressionAttributeValues: { ':purpose': purpose, ':user': userId, ':now': epochSeconds(now) },
              },
            },
            {
              Update: {
                TableName: table,
                Key: userKey(userId),
                UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
                ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
              },
            },
          ],
        }));
        return true;
      } catch (error) {
        if (error instanceof Error && error.name === 'TransactionCanceledException') return false;
        throw error;
      }
    },
  };
}
