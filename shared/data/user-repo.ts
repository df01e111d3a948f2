import type { RepoOperations } from '#shared/data/table-access';
import { GetCommand, TransactWriteCommand } from '#shared/data/commands';
import type { BatchRead } from '#shared/data/batch-read';
import { isCancelled, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { MAX_EMAIL_LENGTH, normalizeEmail, toUser, type User } from '#shared/domain/user';
import { formatTimestamp } from '#shared/domain/time';
import { ConflictError } from '#shared/errors';
import { emailKey, userKey } from '#shared/data/item-keys';

/** A user as stored: the public profile plus its password hash, which never leaves the data layer's callers. */
export interface UserRecord {
  user: User;
  passwordHash: string;
  /** How many password resets the account has had: a reset link works only in the generation it was made in. */
  resetGeneration: number;
  /** The account is being deleted (erasure-repo.ts: its deletion marker). */
  deleting: boolean;
  /** Whether the account has an authenticator app (shared/data/factor-repo.ts): a right password then asks for its code. */
  totpEnabled: boolean;
  /** How many passkeys the account has (shared/data/passkey-repo.ts): a passkey counts as the second factor too. */
  passkeyCount: number;
  /** When the account last signed in (absent: never), for the new-browser alert. */
  lastSignInAt?: string;
}

/** A user as a sign-in needs it for its alert: the profile, and whether it signed in before. */
export interface SignInProfile {
  user: User;
  lastSignInAt?: string;
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
        ? {
          user: toUser(Item), passwordHash: String(Item.passwordHash), resetGeneration: Number(Item.resetGeneration ?? 0), deleting: Item.deletingSince !== undefined,
          totpEnabled: Item.totpEnabled === true, passkeyCount: Number(Item.passkeyCount ?? 0),
          ...(Item.lastSignInAt === undefined ? {} : { lastSignInAt: String(Item.lastSignInAt) }),
        }
        : undefined;
    },

    /** The user registered with an e-mail address, with the password hash. Two GetItems. */
    async findUserByEmail(email: string): Promise<UserRecord | undefined> {
      if (!isAccountAddress(email)) return undefined;
      const { Item: link } = await doc.send(new GetCommand({ TableName: table, Key: emailKey(email) }));
      return link ? this.getUserRecord(String(link.userId)) : undefined;
    },

    /** A user's profile and last sign-in, as part of a combined read. */
    signInProfileRead(userId: string | undefined): BatchRead<SignInProfile | undefined> {
      if (userId === undefined) return { keys: [], parse: () => undefined };
      return {
        keys: [userKey(userId)],
        parse: ([item]) => (item ? { user: toUser(item), ...(item.lastSignInAt === undefined ? {} : { lastSignInAt: String(item.lastSignInAt) }) } : undefined),
      };
    },

    /** The transaction item that records a sign-in's time on the user (a sign-in's transaction carries it). */
    signedInItem(userId: string, now: Date): TransactItem {
      return {
        Update: {
          TableName: table, Key: userKey(userId), UpdateExpression: 'SET lastSignInAt = :at', ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': formatTimestamp(now) },
        },
      };
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
export const USER_REPO_OPERATIONS = {
  getUserById: { actions: ['GetItem'] },
  userIdOfEmailRead: { actions: ['BatchGetItem'] },
  getUserRecord: { actions: ['GetItem'] },
  findUserByEmail: { actions: ['GetItem'] },
  getPasswordHash: { actions: ['GetItem'] },
  signInProfileRead: { actions: ['BatchGetItem'] },
  signedInItem: { actions: ['UpdateItem'] },
  createUser: { actions: ['PutItem'] },
} as const satisfies RepoOperations<UserRepo>;
