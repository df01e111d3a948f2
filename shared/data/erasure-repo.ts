import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, UpdateCommand } from '#shared/data/commands';
import type { ItemKey } from '#shared/data/batch-read';
import { isConditionalCheckFailed, queryAll as queryTable, type RepoDeps } from '#shared/data/dynamodb';
import {
  consentKey, deliveriesOfClientKey, devicesOfUserKey, emailKey, factorsOfUserKey, fromItem, grantsOfClientIndexKey, isFamilyKey,
  passkeyClaimKey, passkeyHashOfKey, PENDING_DELETIONS_PARTITION, pendingDeletionIndexKey, throttleKey, userKey, webhookKey,
} from '#shared/data/item-keys';
import type { RevocationReason, TokenFamily } from '#shared/domain/grant';
import { toUser, type User } from '#shared/domain/user';

// What the account's export and deletion (shared/accounts/account-export.ts, account-deletion.ts)
// need of the table beyond the other repositories: the deletion marker on the profile, and the
// user's items found by the keys and indexes they already have, read for the export and deleted
// one by one (each DeleteItem is idempotent, so a deletion that stopped half-way is finished by
// running it again).

/** An account being deleted: the marker its deletion wrote on the profile before anything went. */
export interface DeletionMarker {
  /** ISO time the deletion started. */
  since: string;
  /** ISO time the farewell e-mail was sent (so a resumed deletion does not send it again). */
  mailedAt?: string;
}

/** A user's profile, with its deletion marker when the account is being deleted. */
export interface ErasureSubject {
  user: User;
  deletion?: DeletionMarker;
}

/** A token family (or a code not yet exchanged) as the export shows it: no hash, no sealed token. */
export type GrantSummary = Pick<TokenFamily, 'familyId' | 'clientId' | 'scopes' | 'rotatedAt' | 'expiresAt'> & {
  status: 'pending' | 'active' | 'revoked';
  createdAt?: string;
};

/** How many DeleteItems run at once. */
const DELETE_CONCURRENCY = 10;

export type ErasureRepo = ReturnType<typeof createErasureRepo>;

const toSubject = (item: Record<string, unknown>): ErasureSubject => ({
  user: toUser(item),
  ...(item.deletingSince === undefined ? {} : {
    deletion: {
      since: String(item.deletingSince),
      ...(item.deletionMailedAt === undefined ? {} : { mailedAt: String(item.deletionMailedAt) }),
    },
  }),
});

export function createErasureRepo({ doc, table }: RepoDeps) {
  const queryAll = (input: Parameters<typeof queryTable>[1]) => queryTable({ doc, table }, input);
  const keyOf = (item: Record<string, unknown>): ItemKey => ({ pk: String(item.pk), sk: String(item.sk) });

  return {
    /** The profile and its deletion marker (one GetItem, consistent); undefined when the account is gone. */
    async getSubject(userId: string): Promise<ErasureSubject | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: userKey(userId), ConsistentRead: true }));
      return Item ? toSubject(Item) : undefined;
    },

    /**
     * Writes the deletion marker on the profile (one UpdateItem) and indexes the profile among the
     * pending deletions. Only once: false when the profile is gone or already marked (a concurrent
     * deletion), and then nothing is written.
     */
    async markDeleting(userId: string, since: string): Promise<boolean> {
      const index = pendingDeletionIndexKey(since, userId);
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: userKey(userId),
          UpdateExpression: 'SET deletingSince = :since, gsi1pk = :gpk, gsi1sk = :gsk',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletingSince)',
          ExpressionAttributeValues: { ':since': since, ':gpk': index.gsi1pk, ':gsk': index.gsi1sk },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** Records on the marker that the farewell e-mail went out (one UpdateItem; nothing when the profile is gone). */
    async recordFarewellMailed(userId: string, at: string): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table, Key: userKey(userId), UpdateExpression: 'SET deletionMailedAt = :at',
          ConditionExpression: 'attribute_exists(deletingSince)', ExpressionAttributeValues: { ':at': at },
        }));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /** The ids of the users whose deletion started and did not finish, oldest first: one Query on GSI1 (per 1 MB page). */
    async pendingDeletions(): Promise<string[]> {
      const items = await queryAll({
        IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': PENDING_DELETIONS_PARTITION },
      });
      return items.map((item) => String(item.id));
    },

    /**
     * Writes on a consent why it is about to be removed (one UpdateItem), so that its removal's
     * `grant.revoked` event carries the reason. Nothing when the consent is gone already.
     */
    async markConsentEnding(userId: string, clientId: string, reason: RevocationReason): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table, Key: consentKey(userId, clientId), UpdateExpression: 'SET endedReason = :reason',
          ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':reason': reason },
        }));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /**
     * Every token family of the user at one application, in any state (codes not yet exchanged,
     * active, revoked and not yet expired): one Query on GSI1, where they are indexed under the
     * application. Without hashes or sealed tokens.
     */
    async grantsOfUser(clientId: string, userId: string): Promise<(GrantSummary & { key: ItemKey })[]> {
      const { gsi1pk, gsi1skPrefix } = grantsOfClientIndexKey(clientId, userId);
      const items = await queryAll({
        IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :user)',
        ExpressionAttributeValues: { ':pk': gsi1pk, ':user': gsi1skPrefix },
      });
      return items.filter(isFamilyKey).map((item) => {
        const family = fromItem<TokenFamily & { status: GrantSummary['status'] }>(item);
        return {
          key: keyOf(item), familyId: family.familyId, clientId: family.clientId, scopes: family.scopes, status: family.status,
          ...(family.createdAt === undefined ? {} : { createdAt: family.createdAt }),
          ...(family.rotatedAt === undefined ? {} : { rotatedAt: family.rotatedAt }),
          ...(family.expiresAt === undefined ? {} : { expiresAt: family.expiresAt }),
        };
      });
    },

    /** The keys of the user's devices: one Query (per 1 MB page), keys only. */
    async deviceKeysOf(userId: string): Promise<ItemKey[]> {
      const { pk, skPrefix } = devicesOfUserKey(userId);
      const items = await queryAll({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ProjectionExpression: 'pk, sk',
      });
      return items.map(keyOf);
    },

    /**
     * The keys of the user's second factors (authenticator app, recovery codes, passkeys), and of
     * each passkey's claim, which lives outside the user's partition: one Query (per 1 MB page), keys only.
     */
    async factorKeysOf(userId: string): Promise<ItemKey[]> {
      const { pk, skPrefix } = factorsOfUserKey(userId);
      const items = (await queryAll({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ProjectionExpression: 'pk, sk',
      })).map(keyOf);
      return [...items, ...items.flatMap((key) => {
        const hash = passkeyHashOfKey(key);
        return hash === undefined ? [] : [passkeyClaimKey(hash)];
      })];
    },

    /**
     * The keys of an application's webhook deliveries: one strongly consistent Query of its partition
     * (per 1 MB page), keys only, so that a delivery written just before (its webhook then still
     * existed) is among them.
     */
    async deliveryKeysOf(clientId: string): Promise<ItemKey[]> {
      const items = await queryAll({
        KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': deliveriesOfClientKey(clientId).pk }, ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
      });
      return items.map(keyOf);
    },

    /** The key of an application's webhook (no request): deleted before its deliveries, no delivery of it can be written after them. */
    webhookKeyOf(clientId: string): ItemKey {
      return webhookKey(clientId);
    },

    /** The keys of the user's records that are keyed by the user id but live outside its partition (no request): the second-factor throttle record. */
    throttleKeysOf(userId: string): ItemKey[] {
      return [throttleKey('second-factor', userId)];
    },

    /** Deletes items by key, one idempotent DeleteItem each (a few at a time). */
    async deleteItems(keys: readonly ItemKey[]): Promise<void> {
      for (let start = 0; start < keys.length; start += DELETE_CONCURRENCY) {
        await Promise.all(keys.slice(start, start + DELETE_CONCURRENCY).map((Key) => doc.send(new DeleteCommand({ TableName: table, Key }))));
      }
    },

    /**
     * Frees the e-mail address for a new sign-up: deletes its item if it is still this user's (one
     * DeleteItem, conditional: once freed, the address may already belong to a new account).
     */
    async releaseAddress(email: string, userId: string): Promise<void> {
      try {
        await doc.send(new DeleteCommand({
          TableName: table, Key: emailKey(email), ConditionExpression: 'userId = :me', ExpressionAttributeValues: { ':me': userId },
        }));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /** Deletes the profile, with its deletion marker: the account is gone (one DeleteItem). */
    async deleteProfile(userId: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: userKey(userId) }));
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const ERASURE_REPO_OPERATIONS = {
  getSubject: { actions: ['GetItem'] },
  markDeleting: { actions: ['UpdateItem'], credential: true },
  recordFarewellMailed: { actions: ['UpdateItem'] },
  pendingDeletions: { actions: [], index: true },
  markConsentEnding: { actions: ['UpdateItem'] },
  grantsOfUser: { actions: [], index: true },
  deviceKeysOf: { actions: ['Query'] },
  factorKeysOf: { actions: ['Query'] },
  deliveryKeysOf: { actions: ['Query'] },
  webhookKeyOf: { actions: [] },
  throttleKeysOf: { actions: [] },
  deleteItems: { actions: ['DeleteItem'] },
  releaseAddress: { actions: ['DeleteItem'] },
  deleteProfile: { actions: ['DeleteItem'] },
} as const satisfies RepoOperations<ErasureRepo>;
