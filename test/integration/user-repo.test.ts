import { randomUUID } from 'node:crypto';
import { GetCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { emailKey, userKey } from '#shared/data/item-keys';
import { USER_FIELDS, type User } from '#shared/domain/user';
import { ConflictError } from '#shared/errors';
import { userNamed } from '../support/factories';
import { useRepoTable } from '../support/repos';

const PASSWORD_HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';

describe('user repository', () => {
  const { doc, table, repos: { users: repo }, requests } = useRepoTable();

  async function existingUser(overrides: Partial<User> = {}) {
    const user = userNamed('Alice', 'Martin', { ...overrides });
    await repo.createUser(user, PASSWORD_HASH);
    requests.reset();
    return user;
  }

  async function rawItem(key: { pk: string; sk: string }) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: key }));
    requests.reset();
    return Item;
  }

  describe('getUserById', () => {
    it('returns the public profile with one GetItem', async () => {
      // Prepare
      const user = await existingUser();

      // Act
      const found = await repo.getUserById(user.id);

      // Assess
      expect(found).toStrictEqual(user);
      expect(requests.operations).toEqual(['GetItemCommand']);
    });

    it('never returns the password hash or key attributes', async () => {
      // Prepare
      const user = await existingUser();

      // Act
      const found = await repo.getUserById(user.id);

      // Assess
      expect(Object.keys(found!)).toEqual([...USER_FIELDS]);
      expect(JSON.stringify(found)).not.toContain(PASSWORD_HASH);
    });

    it('returns undefined for an unknown id, with one GetItem', async () => {
      // Act
      const found = await repo.getUserById(randomUUID());

      // Assess
      expect(found).toBeUndefined();
      expect(requests.operations).toEqual(['GetItemCommand']);
    });
  });

  describe('findUserByEmail', () => {
    it('returns the user and password hash for the exact address, with two GetItems', async () => {
      // Prepare
      const user = await existingUser();

      // Act
      const found = await repo.findUserByEmail(user.email);

      // Assess
      expect(found).toEqual({ user, passwordHash: PASSWORD_HASH, resetGeneration: 0, deleting: false, totpEnabled: false, passkeyCount: 0 });
      expect(requests.operations).toEqual(['GetItemCommand', 'GetItemCommand']);
    });

    it.each([
      ['upper case', (email: string) => email.toUpperCase()],
      ['mixed case', (email: string) => email.replace('alice', 'AlIcE')],
      ['surrounding spaces', (email: string) => `  ${email}\t`],
    ])('finds the user by the address in %s', async (_, variant) => {
      // Prepare
      const user = await existingUser();

      // Act
      const found = await repo.findUserByEmail(variant(user.email));

      // Assess
      expect(found?.user.id).toBe(user.id);
    });

    it('finds a user registered with a mixed-case address by its lower-case form', async () => {
      // Prepare
      const id = randomUUID();
      const user = await existingUser({ id, email: `Bob.Durand-${id}@Example.COM` });

      // Act
      const found = await repo.findUserByEmail(user.email.toLowerCase());

      // Assess
      expect(found?.user).toEqual(user);
    });

    it('returns undefined for an unknown address, with one GetItem', async () => {
      // Act
      const found = await repo.findUserByEmail(`nobody-${randomUUID()}@example.com`);

      // Assess
      expect(found).toBeUndefined();
      expect(requests.operations).toEqual(['GetItemCommand']);
    });
  });

  describe('createUser', () => {
    it('stores the profile with its hash and claims the normalized address, in one transaction', async () => {
      // Prepare
      const id = randomUUID();
      const user = userNamed('Alice', 'Martin', { id, email: `New.User-${id}@Example.com` });

      // Act
      await repo.createUser(user, PASSWORD_HASH);

      // Assess
      expect(requests.operations).toEqual(['TransactWriteItemsCommand']);
      expect(await rawItem(userKey(id))).toEqual({ ...userKey(id), ...user, passwordHash: PASSWORD_HASH });
      expect(await rawItem(emailKey(user.email))).toEqual({ pk: `EMAIL#new.user-${id}@example.com`, sk: 'EMAIL', userId: id });
    });

    it('refuses a second account with the same address in another case, writing nothing', async () => {
      // Prepare
      const first = await existingUser();
      const second = userNamed('Mallory', 'Martin', { email: first.email.toUpperCase() });

      // Act
      const attempt = repo.createUser(second, 'other-hash');

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(ConflictError);
      await expect(attempt).rejects.toMatchObject({ status: 409, code: 'conflict' });
      expect(await rawItem(userKey(second.id))).toBeUndefined();
      expect(await repo.findUserByEmail(first.email)).toEqual({ user: first, passwordHash: PASSWORD_HASH, resetGeneration: 0, deleting: false, totpEnabled: false, passkeyCount: 0 });
    });

    it('refuses to overwrite an existing user id, leaving the new address unclaimed', async () => {
      // Prepare
      const first = await existingUser();
      const clash = userNamed('Mallory', 'Martin', { id: first.id, email: `other-${randomUUID()}@example.com` });

      // Act
      const attempt = repo.createUser(clash, 'other-hash');

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(ConflictError);
      expect(await rawItem(emailKey(clash.email))).toBeUndefined();
      expect(await repo.getUserById(first.id)).toEqual(first);
    });
  });
});
