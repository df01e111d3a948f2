import { TransactWriteCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import { createUserRepo } from '#shared/data/user-repo';
import type { User } from '#shared/domain/user';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

const PASSWORD_HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';

describe('session repository', () => {
  const { doc, table, repos: { sessions }, batch } = useRepoTable();

  async function signedInUser(sessionId: string | undefined, now?: Date): Promise<string | undefined> {
    const [signedIn] = await batch.read([sessions.signedInRead(sessionId, now)]);
    return signedIn?.user.id;
  }

  async function existingUser(): Promise<User> {
    const user = userNamed('Sam', 'Session');
    await createUserRepo({ doc, table }).createUser(user, PASSWORD_HASH);
    return user;
  }

  it('keeps a browser signed in for exactly 8 hours', async () => {
    const user = await existingUser();
    const start = new Date('2026-11-23T10:00:00.000Z');
    const sessionId = await sessions.createSession(user.id, start);
    const end = start.getTime() + 8 * 3600 * 1000;

    expect(SESSION_TTL_SECONDS).toBe(8 * 3600);
    expect(await signedInUser(sessionId, new Date(end - 1000))).toBe(user.id);
    expect(await signedInUser(sessionId, new Date(end))).toBeUndefined();
  });

  it('signs nobody in with a cookie changed in its last character, or without the user id in front', async () => {
    const user = await existingUser();
    const sessionId = await sessions.createSession(user.id);
    const last = sessionId.at(-1) === 'A' ? 'B' : 'A';

    expect(await signedInUser(`${sessionId.slice(0, -1)}${last}`)).toBeUndefined();
    expect(await signedInUser(sessionId.slice(user.id.length))).toBeUndefined();
    expect(await signedInUser(undefined)).toBeUndefined();
    expect(await signedInUser(sessionId)).toBe(user.id);
  });

  it('gives each sign-in its own session', async () => {
    const user = await existingUser();
    const [first, second] = [await sessions.createSession(user.id), await sessions.createSession(user.id)];

    expect(first).not.toBe(second);
    expect(await signedInUser(first)).toBe(user.id);
    expect(await signedInUser(second)).toBe(user.id);
  });

  it('ends one session on sign-out, leaving the other browsers signed in', async () => {
    const user = await existingUser();
    const [phone, laptop] = [await sessions.createSession(user.id), await sessions.createSession(user.id)];

    await sessions.deleteSession(phone);

    expect(await signedInUser(phone)).toBeUndefined();
    expect(await signedInUser(laptop)).toBe(user.id);
  });

  it("finds the keys of every session of a user, and no one else's: deleting them signs every browser out", async () => {
    const [user, other] = [await existingUser(), await existingUser()];
    const mine = [await sessions.createSession(user.id), await sessions.createSession(user.id), await sessions.createSession(user.id)];
    const theirs = await sessions.createSession(other.id);

    const keys = await sessions.sessionKeysOf(user.id);
    expect(keys).toHaveLength(3);
    await doc.send(new TransactWriteCommand({ TransactItems: keys.map((Key) => ({ Delete: { TableName: table, Key } })) }));

    for (const sessionId of mine) expect(await signedInUser(sessionId)).toBeUndefined();
    expect(await signedInUser(theirs)).toBe(other.id);
    expect(await sessions.sessionKeysOf(user.id)).toEqual([]);
  });
});
