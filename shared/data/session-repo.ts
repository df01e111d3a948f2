import type { RepoOperations } from '#shared/data/table-access';
import { DeleteCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import { hashSecret, randomToken } from '#shared/secrets';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { toUser, type User } from '#shared/domain/user';
import type { BatchRead, ItemKey } from '#shared/data/batch-read';
import { isConditionalCheckFailed, queryAll, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { sessionKey, sessionsOfUserIndexKey, sessionsOfUserPartition, userKey } from '#shared/data/item-keys';

/** How long a browser login lasts. */
export const SESSION_TTL_SECONDS = 8 * 3600;

export interface Session {
  userId: string;
  /** Epoch seconds. */
  expiresAt: number;
}

/** Where a session was signed in from, for the owner's list of sessions and the sign-in alert. */
export interface SessionDetails {
  /** The browser as describeBrowser names it. */
  browser: string;
  /** The client's IP address. */
  address: string;
}

/** A live session as its owner's list shows it. */
export interface SessionListing extends SessionDetails {
  /** The hash of its cookie: its id in URLs (the cookie itself is never shown). */
  id: string;
  createdAt: string;
  /** Epoch seconds: when it ends. */
  expiresAt: number;
}

export interface SignedIn {
  user: User;
  /** The session cookie's value. */
  sessionId: string;
  /** When the session started (epoch seconds): its sign-in, for changes that ask for a recent one. */
  signedInAt: number;
  /**
   * The account is being deleted (its profile carries the deletion marker): its sessions open no
   * page but the deletion's own, which finishes it (shared/pages/session.ts readPage).
   */
  deleting?: true;
}

/** A browser session as the account's export shows it: when it ends, and whether it is the one asking. */
export interface SessionSummary {
  /** Epoch seconds. */
  expiresAt: number;
  current: boolean;
  /** The browser as its sign-in named it ('An unknown browser' for a session older than that record). */
  browser: string;
  /** The address it signed in from, if recorded. */
  address?: string;
}

export type SessionRepo = ReturnType<typeof createSessionRepo>;

/**
 * A session cookie is `<user id>.<256-bit random token>`. The user id is no secret (it is the `sub`
 * of every token the user grants); carrying it lets a page read the session and its user in one
 * BatchGetItem. Only the hash of the whole value is stored, and the stored session must name the
 * same user, so a cookie with another id in front matches no session.
 */
const SESSION_ID = /^([0-9A-Za-z-]{1,64})\.[0-9A-Za-z_-]{43}$/;

/** The user id a session cookie claims, if it has the shape of one of ours. */
export const sessionUserId = (sessionId: string): string | undefined => SESSION_ID.exec(sessionId)?.[1];

/** Browser sessions of the authorization server, stored under the hash of the cookie value. */
export function createSessionRepo({ doc, table }: RepoDeps) {
  return {
    /**
     * Starts a session; returns the cookie value (never stored). One PutItem, or with `alsoWrite`
     * (a login's throttle and known-browser items) one TransactWriteItems: all or nothing.
     */
    async createSession(userId: string, now = new Date(), alsoWrite: readonly TransactItem[] = [], details?: SessionDetails): Promise<string> {
      const id = `${userId}.${randomToken()}`;
      const hash = hashSecret(id);
      const session: Session = { userId, expiresAt: epochSeconds(now) + SESSION_TTL_SECONDS };
      const put = {
        TableName: table,
        Item: { ...sessionKey(hash), ...sessionsOfUserIndexKey(userId, hash), ...session, createdAt: formatTimestamp(now), ...details },
      };
      if (alsoWrite.length === 0) await doc.send(new PutCommand(put));
      else await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, ...alsoWrite] }));
      return id;
    },

    /**
     * The user signed in by a session cookie, as part of a combined read: the session and the user
     * it names. TTL deletion is late, so expiry is checked here. A malformed cookie reads nothing.
     */
    signedInRead(sessionId: string | undefined, now = new Date()): BatchRead<SignedIn | undefined> {
      const userId = sessionId === undefined ? undefined : sessionUserId(sessionId);
      if (!sessionId || !userId) return { keys: [], parse: () => undefined };
      return {
        keys: [sessionKey(hashSecret(sessionId)), userKey(userId)],
        parse: ([session, user]) => {
          const live = session && session.userId === userId && Number(session.expiresAt) > epochSeconds(now);
          if (!live || !user) return undefined;
          const signedIn = { user: toUser(user), sessionId, signedInAt: Number(session.expiresAt) - SESSION_TTL_SECONDS };
          return user.deletingSince === undefined ? signedIn : { ...signedIn, deleting: true as const };
        },
      };
    },

    async deleteSession(id: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: sessionKey(hashSecret(id)) }));
    },

    /** The user's live sessions, newest first. One Query on GSI1 (per 1 MB page). */
    async sessionsOf(userId: string, now = new Date()): Promise<SessionListing[]> {
      const items = await queryAll({ doc, table }, {
        IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': sessionsOfUserPartition(userId) },
      });
      return items
        .filter((item) => item.userId === userId && Number(item.expiresAt) > epochSeconds(now))
        .map((item) => ({
          id: String(item.gsi1sk), createdAt: String(item.createdAt ?? ''), browser: String(item.browser ?? 'An unknown browser'),
          address: String(item.address ?? ''), expiresAt: Number(item.expiresAt),
        }))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },

    /** Ends one of the user's sessions by its id (the hash of its cookie): one conditional DeleteItem; false when it is not the user's. */
    async endSession(userId: string, sessionHash: string): Promise<boolean> {
      try {
        await doc.send(new DeleteCommand({
          TableName: table, Key: sessionKey(sessionHash), ConditionExpression: 'userId = :user', ExpressionAttributeValues: { ':user': userId },
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /** Ends the sessions of these keys (sessionKeysOf's): one DeleteItem each. */
    async endSessions(keys: readonly ItemKey[]): Promise<void> {
      for (const Key of keys) await doc.send(new DeleteCommand({ TableName: table, Key }));
    },

    /**
     * Every live session of a user (the account's export): when it ends, and whether it is the one
     * of `currentSessionId`. One Query on GSI1 (sessionsOf).
     */
    async listSessions(userId: string, currentSessionId?: string, now = new Date()): Promise<SessionSummary[]> {
      const current = currentSessionId === undefined ? undefined : hashSecret(currentSessionId);
      return (await this.sessionsOf(userId, now)).map((session) => ({
        expiresAt: session.expiresAt, current: session.id === current, browser: session.browser, ...(session.address ? { address: session.address } : {}),
      }));
    },

    /** The keys of every session of a user, to end them all (`redeemLink`'s `alsoDelete`). One Query on GSI1 (per 1 MB page). */
    async sessionKeysOf(userId: string): Promise<ItemKey[]> {
      const items = await queryAll({ doc, table }, {
        IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': sessionsOfUserPartition(userId) },
      });
      return items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const SESSION_REPO_OPERATIONS = {
  createSession: { actions: ['PutItem'] },
  signedInRead: { actions: ['BatchGetItem'] },
  deleteSession: { actions: ['DeleteItem'] },
  endSessions: { actions: ['DeleteItem'] },
  sessionsOf: { actions: [], index: true },
  endSession: { actions: ['DeleteItem'] },
  sessionKeysOf: { actions: [], index: true },
  listSessions: { actions: [], index: true },
} as const satisfies RepoOperations<SessionRepo>;
