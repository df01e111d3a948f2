import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { hashSecret, randomToken } from '#shared/secrets';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { ItemKey } from '#shared/data/batch-read';
import { isCancelled, MAX_TRANSACTION_ITEMS, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { linkKey, userKey } from '#shared/data/item-keys';

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
    /**
     * A new link for the user: the token to put in the e-mail (never stored) and the transaction
     * item that stores it, for a caller that writes it together with something else.
     */
    newLink(purpose: LinkPurpose, userId: string, now = new Date(), generation = 0): { token: string; item: TransactItem } {
      const token = randomToken();
      const Item = { ...linkKey(hashSecret(token)), purpose, userId, generation, expiresAt: epochSeconds(now) + LINK_TTL_SECONDS[purpose] };
      return { token, item: { Put: { TableName: table, Item } } };
    },

    /**
     * Creates a link for the user; returns the token to put in the e-mail. One PutItem. A reset link
     * carries the user's `resetGeneration` as it was read: it works only while that stands.
     */
    async createLink(purpose: LinkPurpose, userId: string, now = new Date(), generation = 0): Promise<string> {
      const { token, item } = this.newLink(purpose, userId, now, generation);
      await doc.send(new PutCommand(item.Put!));
      return token;
    },

    /** The user a live link of this purpose belongs to, without using it up. One GetItem. */
    async peekLink(purpose: LinkPurpose, token: string, now = new Date()): Promise<string | undefined> {
      return (await this.readLink(purpose, token, now))?.userId;
    },

    /**
     * A live link of this purpose: its user and the reset generation it was made in (0 for a link
     * that carries none), without using it up. One GetItem.
     */
    async readLink(purpose: LinkPurpose, token: string, now = new Date()): Promise<{ userId: string; generation: number } | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: linkKey(hashSecret(token)), ConsistentRead: true }));
      if (!Item || Item.purpose !== purpose || Number(Item.expiresAt) <= epochSeconds(now)) return undefined;
      return { userId: String(Item.userId), generation: Number(Item.generation ?? 0) };
    },

    /**
     * Uses up the link of `userId` (as peekLink found it) and applies `changes` to that user in one
     * transaction: all or nothing. Returns false when the link is unknown, expired, of another
     * purpose, of another user or already used; then nothing is written.
     * The items of `alsoDelete` (the sessions a password reset ends) go with it: as many as fit in
     * that transaction beside the link and the user, the rest one DeleteItem each once it succeeded.
     * With `generation` (a reset link, as readLink found it): the link and the user must both still
     * be in that reset generation, and the user moves to the next one, so every other link made in
     * it stops working in the same write; no link is listed or read for that.
     */
    async redeemLink(
      purpose: LinkPurpose, token: string, userId: string, changes: Record<string, unknown>, alsoDelete: readonly ItemKey[] = [],
      now = new Date(), generation?: number,
    ): Promise<boolean> {
      const entries = Object.entries({
        ...changes, update_date: formatTimestamp(now), ...(generation === undefined ? {} : { resetGeneration: generation + 1 }),
      });
      // A link or user from before generations were kept carries none: generation 0.
      const inGeneration = (attribute: string) => (generation === 0 ? `(attribute_not_exists(${attribute}) OR ${attribute} = :generation)` : `${attribute} = :generation`);
      const generationValue = generation === undefined ? {} : { ':generation': generation };
      const deletedInTransaction = alsoDelete.slice(0, MAX_TRANSACTION_ITEMS - 2); // beside the link and the user
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: table,
                Key: linkKey(hashSecret(token)),
                ConditionExpression: `purpose = :purpose AND userId = :user AND expiresAt > :now${generation === undefined ? '' : ` AND ${inGeneration('generation')}`}`,
                ExpressionAttributeValues: { ':purpose': purpose, ':user': userId, ':now': epochSeconds(now), ...generationValue },
              },
            },
            {
              Update: {
                TableName: table,
                Key: userKey(userId),
                UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
                ConditionExpression: `attribute_exists(pk)${generation === undefined ? '' : ` AND ${inGeneration('resetGeneration')}`}`,
                ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
                ExpressionAttributeValues: { ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])), ...generationValue },
              },
            },
            ...deletedInTransaction.map((Key): TransactItem => ({ Delete: { TableName: table, Key } })),
          ],
        }));
      } catch (error) {
        if (isCancelled(error)) return false;
        throw error;
      }
      for (const Key of alsoDelete.slice(deletedInTransaction.length)) await doc.send(new DeleteCommand({ TableName: table, Key }));
      return true;
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const LINK_REPO_OPERATIONS = {
  newLink: { actions: ['PutItem'] },
  createLink: { actions: ['PutItem'] },
  peekLink: { actions: ['GetItem'] },
  readLink: { actions: ['GetItem'] },
  redeemLink: { actions: ['DeleteItem', 'UpdateItem'], credential: true },
} as const satisfies RepoOperations<LinkRepo>;
