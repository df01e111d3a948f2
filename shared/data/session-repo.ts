import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { epochSeconds } from '#shared/domain/time';
import type { RepoDeps } from '#shared/data/client';
import { sessionKey, sessionsOfUserIndexKey } from '#shared/data/keys';

/** How long a browser login lasts. */
export const SESSION_TTL_SECONDS = 8 * 3600;

export interface Session {
  userId: string;
  /** Epoch seconds. */
  expiresAt: number;
}

export type SessionRepo = ReturnType<typeof createSessionRepo>;

/** Browser sessions of the authorization server, stored under the hash of the cookie value. */
export function createSessionRepo({ doc, table }: RepoDeps) {
  return {
    /** Starts a session; returns the cookie value (never stored). */
    async createSession(userId: string, now = new Date()): Promise<string> {
      const id = randomToken();
      const hash = hashSecret(id);
      const session: Session = { userId, expiresAt: epochSeconds(now) + SESSION_TTL_SECONDS };
      await doc.send(new PutCommand({ TableName: table, Item: { ...sessionKey(hash), ...sessionsOfUserIndexKey(userId, hash), ...session } }));
      return id;
    },

    /** The live session for a cookie value. TTL deletion is late, so expiry is checked here. One GetItem. */
    async getSession(id: string, now = new Date()): Promise<Session | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: sessionKey(hashSecret(id)) }));
      if (!Item || Number(Item.expiresAt) <= epochSeconds(now)) return undefined;
      return { userId: String(Item.userId), expiresAt: Number(Item.expiresAt) };
    },

    async deleteSession(id: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: sessionKey(hashSecret(id)) }));
    },

    /** Ends every session of a user (after a password reset). One Query on GSI1, then one delete per session. */
    async deleteSessionsOf(userId: string): Promise<number> {
      const { gsi1pk } = sessionsOfUserIndexKey(userId, '');
      let ended = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new QueryCommand({
          TableName: table,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': gsi1pk },
          ExclusiveStartKey: startKey,
        }));
        for (const item of page.Items ?? []) {
          await doc.send(new DeleteCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }));
          ended++;
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return ended;
    },
  };
}
