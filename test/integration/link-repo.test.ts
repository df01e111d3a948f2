import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, GetCommand, PutCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import type { ItemKey } from '#shared/data/batch-read';
import { linkKey, userKey } from '#shared/data/item-keys';
import { createLinkRepo, LINK_TTL_SECONDS } from '#shared/data/link-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

// E-mailed links through the repository on DynamoDB Local: what a holder of a link (or of an old or
// someone else's link) can and cannot do with it. Time is a parameter: nothing waits.

const PASSWORD_HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';
const NEW_HASH = 'scrypt$32768$8$1$bmV3$bmV3';
const T = new Date('2026-11-23T10:00:00.000Z');
const at = (seconds: number) => new Date(T.getTime() + seconds * 1000);

describe('link repository', () => {
  const { doc, table, repos: { links } } = useRepoTable();

  async function existingUser(): Promise<User> {
    const user = userNamed('Lin', 'Link', { email_confirmed: false });
    await createUserRepo({ doc, table }).createUser(user, PASSWORD_HASH);
    return user;
  }
  const stored = async (key: ItemKey) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  const profile = (userId: string) => stored(userKey(userId));

  it('makes a confirmation link work for exactly 24 hours and a reset link for exactly 1 hour', async () => {
    const user = await existingUser();
    const confirm = await links.createLink('confirm-email', user.id, T);
    const reset = await links.createLink('reset-password', user.id, T);

    expect(LINK_TTL_SECONDS).toEqual({ 'confirm-email': 24 * 3600, 'reset-password': 3600 });
    expect(await links.peekLink('confirm-email', confirm, at(24 * 3600 - 1))).toBe(user.id);
    expect(await links.peekLink('confirm-email', confirm, at(24 * 3600))).toBeUndefined();
    expect(await links.readLink('reset-password', reset, at(3600 - 1))).toEqual({ userId: user.id, generation: 0 });
    expect(await links.readLink('reset-password', reset, at(3600))).toBeUndefined();
    // DynamoDB deletes it later by its TTL attribute.
    expect((await stored(linkKey(hashSecret(reset))))?.expiresAt).toBe(epochSeconds(T) + 3600);
  });

  it('stores only the hash of the token: the e-mailed value is not in the table', async () => {
    const user = await existingUser();
    const { token, item } = links.newLink('confirm-email', user.id, T);

    expect(item.Put?.Item).toMatchObject({ ...linkKey(hashSecret(token)), purpose: 'confirm-email', userId: user.id });
    expect(JSON.stringify(item)).not.toContain(token);
    expect(links.newLink('confirm-email', user.id, T).token).not.toBe(token);
  });

  it('uses a confirmation link once: the change is applied with the update date, and the link is gone', async () => {
    const user = await existingUser();
    const token = await links.createLink('confirm-email', user.id, T);

    expect(await links.peekLink('confirm-email', token, at(60))).toBe(user.id);
    expect(await links.peekLink('confirm-email', token, at(60))).toBe(user.id); // peeking uses nothing up
    expect(await links.redeemLink('confirm-email', token, user.id, { email_confirmed: true }, [], at(60))).toBe(true);

    expect(await profile(user.id)).toMatchObject({ email_confirmed: true, update_date: formatTimestamp(at(60)), passwordHash: PASSWORD_HASH });
    expect(await stored(linkKey(hashSecret(token)))).toBeUndefined();
    expect(await links.peekLink('confirm-email', token, at(61))).toBeUndefined();
    expect(await links.redeemLink('confirm-email', token, user.id, { email_confirmed: false }, [], at(61))).toBe(false);
    expect(await profile(user.id)).toMatchObject({ email_confirmed: true, update_date: formatTimestamp(at(60)) });
  });

  it('refuses a link of another purpose, of another user, expired or unknown, and then writes nothing', async () => {
    const [user, other] = [await existingUser(), await existingUser()];
    const confirm = await links.createLink('confirm-email', user.id, T);
    const reset = await links.createLink('reset-password', user.id, T);
    const before = await profile(user.id);

    expect(await links.peekLink('reset-password', confirm, at(1))).toBeUndefined();
    expect(await links.readLink('confirm-email', reset, at(1))).toBeUndefined();
    expect(await links.peekLink('confirm-email', randomToken(), at(1))).toBeUndefined();
    const refused = [
      await links.redeemLink('reset-password', confirm, user.id, { passwordHash: NEW_HASH }, [], at(1), 0),
      await links.redeemLink('confirm-email', reset, user.id, { email_confirmed: true }, [], at(1)),
      await links.redeemLink('confirm-email', confirm, other.id, { email_confirmed: true }, [], at(1)),
      await links.redeemLink('reset-password', reset, user.id, { passwordHash: NEW_HASH }, [], at(3600), 0),
      await links.redeemLink('confirm-email', randomToken(), user.id, { email_confirmed: true }, [], at(1)),
    ];

    expect(refused).toEqual([false, false, false, false, false]);
    expect(await profile(user.id)).toEqual(before);
    expect((await profile(other.id))?.email_confirmed).toBe(false);
    // Both links are still there, each for what it was made for.
    expect(await links.peekLink('confirm-email', confirm, at(2))).toBe(user.id);
    expect(await links.readLink('reset-password', reset, at(2))).toEqual({ userId: user.id, generation: 0 });
  });

  it('refuses a link whose account is gone, and creates no account for it', async () => {
    const userId = randomUUID();
    const token = await links.createLink('confirm-email', userId, T);

    expect(await links.redeemLink('confirm-email', token, userId, { email_confirmed: true }, [], at(1))).toBe(false);
    expect(await profile(userId)).toBeUndefined();
    expect(await links.peekLink('confirm-email', token, at(2))).toBe(userId);
  });

  it('makes every other reset link of the account stop working once one is used, and lets a link of the new generation work', async () => {
    const user = await existingUser();
    const first = await links.createLink('reset-password', user.id, T, 0);
    const second = await links.createLink('reset-password', user.id, T, 0);

    const link = await links.readLink('reset-password', first, at(10));
    expect(link).toEqual({ userId: user.id, generation: 0 });
    expect(await links.redeemLink('reset-password', first, user.id, { passwordHash: NEW_HASH }, [], at(10), link!.generation)).toBe(true);
    expect(await profile(user.id)).toMatchObject({ passwordHash: NEW_HASH, resetGeneration: 1, update_date: formatTimestamp(at(10)) });

    // The second link still reads as generation 0, which the account has left: using it changes nothing.
    const stale = await links.readLink('reset-password', second, at(20));
    expect(stale).toEqual({ userId: user.id, generation: 0 });
    expect(await links.redeemLink('reset-password', second, user.id, { passwordHash: PASSWORD_HASH }, [], at(20), stale!.generation)).toBe(false);
    // Nor does claiming a generation the link was not made in.
    expect(await links.redeemLink('reset-password', second, user.id, { passwordHash: PASSWORD_HASH }, [], at(20), 1)).toBe(false);
    expect(await profile(user.id)).toMatchObject({ passwordHash: NEW_HASH, resetGeneration: 1 });

    const third = await links.createLink('reset-password', user.id, at(30), 1);
    expect(await links.readLink('reset-password', third, at(40))).toEqual({ userId: user.id, generation: 1 });
    expect(await links.redeemLink('reset-password', third, user.id, { passwordHash: PASSWORD_HASH }, [], at(40), 1)).toBe(true);
    expect(await profile(user.id)).toMatchObject({ passwordHash: PASSWORD_HASH, resetGeneration: 2 });
  });

  it('accepts a reset link from before generations were kept (no generation on the link nor on the account) as generation 0', async () => {
    const user = await existingUser();
    const token = randomToken();
    await doc.send(new PutCommand({
      TableName: table,
      Item: { ...linkKey(hashSecret(token)), purpose: 'reset-password', userId: user.id, expiresAt: epochSeconds(T) + 3600 },
    }));

    expect(await links.readLink('reset-password', token, at(1))).toEqual({ userId: user.id, generation: 0 });
    expect(await links.redeemLink('reset-password', token, user.id, { passwordHash: NEW_HASH }, [], at(1), 0)).toBe(true);
    expect(await profile(user.id)).toMatchObject({ passwordHash: NEW_HASH, resetGeneration: 1 });
  });

  it('ends every listed session with the reset, beyond what one transaction holds, and none when the link is refused', async () => {
    const user = await existingUser();
    const sessions: ItemKey[] = Array.from({ length: 120 }, () => ({ pk: `SESSION#${randomToken()}`, sk: 'SESSION' }));
    for (let i = 0; i < sessions.length; i += 25) {
      await doc.send(new BatchWriteCommand({
        RequestItems: { [table]: sessions.slice(i, i + 25).map((Key) => ({ PutRequest: { Item: { ...Key, userId: user.id } } })) },
      }));
    }
    const stillThere = async () => (await Promise.all(sessions.map(stored))).filter(Boolean).length;
    const token = await links.createLink('reset-password', user.id, T, 0);

    expect(await links.redeemLink('reset-password', token, user.id, { passwordHash: NEW_HASH }, sessions, at(3600), 0)).toBe(false);
    expect(await stillThere()).toBe(120);

    expect(await links.redeemLink('reset-password', token, user.id, { passwordHash: NEW_HASH }, sessions, at(1), 0)).toBe(true);
    expect(await stillThere()).toBe(0);
    expect((await profile(user.id))?.passwordHash).toBe(NEW_HASH);
  });

  it('passes a storage failure on rather than answering that the link is unknown', async () => {
    const user = await existingUser();
    const token = await links.createLink('confirm-email', user.id, T);
    const elsewhere = createLinkRepo({ doc, table: `missing-${randomUUID()}` });

    await expect(elsewhere.redeemLink('confirm-email', token, user.id, { email_confirmed: true }, [], at(1))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(elsewhere.peekLink('confirm-email', token, at(1))).rejects.toThrow();
  });
});
