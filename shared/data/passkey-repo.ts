import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { hashSecret } from '#shared/secrets';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { BatchRead, Item } from '#shared/data/batch-read';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, queryAll, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { challengeKey, passkeyClaimKey, passkeyKey, passkeysOfUserKey, userKey } from '#shared/data/item-keys';

/** How long a WebAuthn challenge waits for its answer (the ceremony's own timeout is 5 minutes). */
export const CHALLENGE_SECONDS = 5 * 60;
/** The most passkeys an account may have. */
export const MAX_PASSKEYS = 10;

/** What a challenge is for: a passkey's registration (by a signed-in user) or a sign-in. */
export type ChallengePurpose = 'register' | 'authenticate';

/** A stored passkey: its credential (id, public key, signature counter, transports) and what the account page shows. */
export interface StoredPasskey {
  /** The credential id, base64url, as the browser gives it. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  /** The name its owner gave it. */
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** Synced to the owner's other devices (a multi-device credential) or bound to one. */
  backedUp: boolean;
}

export type PasskeyRepo = ReturnType<typeof createPasskeyRepo>;

const toPasskey = (item: Item): StoredPasskey => ({
  credentialId: String(item.credentialId), publicKey: String(item.publicKey), counter: Number(item.counter ?? 0),
  transports: Array.isArray(item.transports) ? item.transports.map(String) : [], name: String(item.name), createdAt: String(item.createdAt),
  lastUsedAt: item.lastUsedAt === undefined ? undefined : String(item.lastUsedAt), backedUp: item.backedUp === true,
});

/**
 * Passkeys (shared/accounts/passkeys.ts decides; this module stores): each in its user's partition
 * under the hash of its credential id, with a claim item per credential id so that no credential
 * is registered to two accounts; the user item counts them (`passkeyCount`), so the login reads
 * whether a second factor is enrolled from the GetItem it makes anyway. And the WebAuthn challenges,
 * single-use TTL items taken by a conditional delete.
 */
export function createPasskeyRepo({ doc, table }: RepoDeps) {
  return {
    /** The user's passkeys, oldest first. One Query of the user's partition (per 1 MB page). */
    async passkeysOf(userId: string): Promise<StoredPasskey[]> {
      const { pk, skPrefix } = passkeysOfUserKey(userId);
      const items = await queryAll({ doc, table }, {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        // Stryker disable next-line BooleanLiteral: DynamoDB Local reads consistently whatever the flag; it matters on the real service
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix }, ConsistentRead: true,
      });
      return items.map(toPasskey).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    /** One passkey of a user by its credential id, as part of a combined read. */
    passkeyRead(userId: string | undefined, credentialId: string | undefined): BatchRead<StoredPasskey | undefined> {
      if (!userId || !credentialId) return { keys: [], parse: () => undefined };
      return { keys: [passkeyKey(userId, hashSecret(credentialId))], parse: ([item]) => (item ? toPasskey(item) : undefined) };
    },

    /**
     * Registers a passkey to the user, in one TransactWriteItems: the passkey, the claim of its
     * credential id (`attribute_not_exists`: registered to no account yet) and the user's count
     * (below MAX_PASSKEYS). `taken`: the credential is registered already (to this account or
     * another); `full`: the account has MAX_PASSKEYS. Nothing is written then.
     */
    async addPasskey(userId: string, passkey: StoredPasskey): Promise<'added' | 'taken' | 'full'> {
      const credentialIdHash = hashSecret(passkey.credentialId);
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { ...passkeyKey(userId, credentialIdHash), ...passkey }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: table, Item: { ...passkeyClaimKey(credentialIdHash), userId }, ConditionExpression: 'attribute_not_exists(pk)' } },
            {
              Update: {
                TableName: table, Key: userKey(userId), UpdateExpression: 'ADD passkeyCount :one',
                ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(passkeyCount) OR passkeyCount < :max)',
                ExpressionAttributeValues: { ':one': 1, ':max': MAX_PASSKEYS },
              },
            },
          ],
        }));
        return 'added';
      } catch (error) {
        if (!isCancelled(error)) throw error;
        const [own, claim] = cancellationCodes(error);
        return own === 'ConditionalCheckFailed' || claim === 'ConditionalCheckFailed' ? 'taken' : 'full';
      }
    },

    /** Removes one of the user's passkeys, its claim and its count, in one TransactWriteItems; false when it is not the user's. */
    async removePasskey(userId: string, credentialIdHash: string): Promise<boolean> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: table, Key: passkeyKey(userId, credentialIdHash), ConditionExpression: 'attribute_exists(pk)' } },
            { Delete: { TableName: table, Key: passkeyClaimKey(credentialIdHash), ConditionExpression: 'userId = :user', ExpressionAttributeValues: { ':user': userId } } },
            { Update: { TableName: table, Key: userKey(userId), UpdateExpression: 'ADD passkeyCount :minusOne', ExpressionAttributeValues: { ':minusOne': -1 } } },
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error)) return false;
        throw error;
      }
    },

    /** The transaction item that records a passkey's use: its new signature counter and when (it must still exist). */
    usePasskeyItem(userId: string, credentialId: string, counter: number, now: Date): TransactItem {
      return {
        Update: {
          TableName: table, Key: passkeyKey(userId, hashSecret(credentialId)), UpdateExpression: 'SET #counter = :counter, lastUsedAt = :at',
          ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeNames: { '#counter': 'counter' },
          ExpressionAttributeValues: { ':counter': counter, ':at': formatTimestamp(now) },
        },
      };
    },

    /** Stores a new challenge (its hash) for a ceremony, for a user or (a sign-in) for anyone. One PutItem. */
    async createChallenge(challenge: string, purpose: ChallengePurpose, userId: string | undefined, now: Date): Promise<void> {
      await doc.send(new PutCommand({
        TableName: table,
        Item: { ...challengeKey(hashSecret(challenge)), purpose, ...(userId ? { userId } : {}), expiresAt: epochSeconds(now) + CHALLENGE_SECONDS },
      }));
    },

    /**
     * Takes a challenge: one conditional DeleteItem, so a challenge answers one ceremony, however
     * many responses carry it. False when it is unknown, expired, used, of another purpose or (a
     * registration) of another user.
     */
    async takeChallenge(challenge: string, purpose: ChallengePurpose, userId: string | undefined, now: Date): Promise<boolean> {
      try {
        await doc.send(new DeleteCommand({
          TableName: table, Key: challengeKey(hashSecret(challenge)),
          ConditionExpression: `purpose = :purpose AND expiresAt > :now${userId ? ' AND userId = :user' : ''}`,
          ExpressionAttributeValues: { ':purpose': purpose, ':now': epochSeconds(now), ...(userId ? { ':user': userId } : {}) },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** Every passkey of the user removed with its claim, and the count to 0 (an operator's reset). One DeleteItem per item. */
    async removeAllPasskeys(userId: string): Promise<number> {
      const passkeys = await this.passkeysOf(userId);
      for (const passkey of passkeys) {
        const hash = hashSecret(passkey.credentialId);
        await doc.send(new DeleteCommand({ TableName: table, Key: passkeyKey(userId, hash) }));
        await doc.send(new DeleteCommand({ TableName: table, Key: passkeyClaimKey(hash) }));
      }
      await doc.send(new TransactWriteCommand({
        TransactItems: [{ Update: { TableName: table, Key: userKey(userId), UpdateExpression: 'SET passkeyCount = :zero', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':zero': 0 } } }],
      })).catch((error: unknown) => {
        if (!isCancelled(error)) throw error;
      });
      return passkeys.length;
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const PASSKEY_REPO_OPERATIONS = {
  passkeysOf: { actions: ['Query'] },
  passkeyRead: { actions: ['BatchGetItem'] },
  addPasskey: { actions: ['PutItem', 'UpdateItem'], credential: true },
  removePasskey: { actions: ['DeleteItem', 'UpdateItem'], credential: true },
  usePasskeyItem: { actions: ['UpdateItem'] },
  createChallenge: { actions: ['PutItem'] },
  takeChallenge: { actions: ['DeleteItem'] },
  removeAllPasskeys: { actions: ['Query', 'DeleteItem', 'UpdateItem'], credential: true },
} as const satisfies RepoOperations<PasskeyRepo>;
