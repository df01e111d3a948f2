import type { RepoNeeds } from '#shared/data/table-access';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchRead } from '#shared/data/batch-read';
import { isCancelled, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { MAX_EMAIL_LENGTH, normalizeEmail, toUser, type User } from '#shared/domain/user';
import { ConflictError } from '#shared/errors';
import { emailKey, userKey } from '#shared/data/keys';

/** A user as stored: the public profile plus its password hash, which never leaves the data layer's callers. */
export interface UserRecord {
  user: User;
  passwordHash: string;
  /** How many password resets the account has had: a reset link works only in the generation it was made in. */
  resetGeneration: number;
  /** Whether the account has an authenticator app (shared/data/factor-repo.ts): a right password then asks for its code. */
  totpEnabled: boolean;
  /** How many passkeys the account has (shared/data/passkey-repo.ts): a passkey counts as the second factor too. */
  passkeyCount: number;
}

export type UserRepo = ReturnType<typeof createUserRepo>;

/** Whether an address could belong to an account (and so be looked up at all). */
const isAccountAddress = (email: string) => {
  const normalized = normalizeEmail(email);
  return normalized.length > 0 && normalized.length <= MAX_EMAIL_LENGTH;
};

/** Access patterns on users. */
export function createUserRepo({ doc, table }: RepoDeps) {
  return {
    /** The profile of a user by id. One GetItem. */
    async getUserById(userId: string): Promise<User | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: userKey(userId) }));
      return Item ? toUser(Item) : undefined;
    },

    /**
     * The id of the user registered with an e-mail address, as part of a combined read. An empty
     * address, or one longer than any account's (which would not fit in a key), reads nothing.
     */
    userIdOfEmailRead(email: string): BatchRead<string | undefined> {
      return {
        keys: isAccountAddress(email) ? [emailKey(email)] : [],
        parse: ([item]) => (item ? String(item.userId) : undefined),
      };
    },

    /** A user with the password hash. One GetItem. */
    async getUserRecord(userId: string): Promise<UserRecord | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: userKey(userId) }));
      return Item
        ? { user: toUser(Item), passwordHash: String(Item.passwordHash), resetGeneration: Number(Item.resetGeneration ?? 0), totpEnabled: Item.totpEnabled === true,
          passkeyCount: Number(Item.passkeyCount ?? 0) }
        : undefined;
    },

    /** The user registered with an e-mail address, with the password hash. Two GetItems. */
    async findUserByEmail(email: string): Promise<UserRecord | undefined> {
      if (!isAccountAddress(email)) return undefined;
      const { Item: link } = await doc.send(new GetCommand({ TableName: table, Key: emailKey(email) }));
      return link ? this.getUserRecord(String(link.userId)) : undefined;
    },

    /** The stored password hash of a user. One GetItem. */
    async getPasswordHash(userId: string): Promise<string | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: userKey(userId), ProjectionExpression: 'passwordHash' }));
      return Item?.passwordHash as string | undefined;
    },

    /**
     * Creates a user and claims the e-mail address in one transaction, so two accounts can never
     * share an address; `extra` items (the confirmation link) are written in the same transaction.
     * Throws ConflictError when the address is taken.
     */
    async createUser(user: User, passwordHash: string, extra: readonly TransactItem[] = []): Promise<void> {
      const email = normalizeEmail(user.email);
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { ...userKey(user.id), ...user, passwordHash }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: table, Item: { ...emailKey(email), userId: user.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
            ...extra,
          ],
        }));
      } catch (error) {
        if (isCancelled(error)) {
          throw new ConflictError('An account already exists for this e-mail address.');
        }
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const USER_REPO_NEEDS = {
  getUserById: { actions: ['GetItem'] },
  userIdOfEmailRead: { actions: ['BatchGetItem'] },
  getUserRecord: { actions: ['GetItem'] },
  findUserByEmail: { actions: ['GetItem'] },
  getPasswordHash: { actions: ['GetItem'] },
  createUser: { actions: ['PutItem'] },
} as const satisfies RepoNeeds<UserRepo>;
