import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { createBatchReader } from '#shared/data/batch-read';
import { createClientRepo, type SecretReveal } from '#shared/data/client-repo';
import type { Client } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { ConflictError, NotFoundError } from '#shared/errors';
import { makeClient } from '../support/factories';
import { useRepoTable } from '../support/repos';
import { freshTable } from '../support/service';

const NOW = new Date('2026-11-23T10:00:00.000Z');

function makeReveal(client: Client, overrides: Partial<SecretReveal> = {}): SecretReveal {
  return {
    keyHash: hashSecret(randomToken()), clientId: client.clientId, developerId: client.developerId, sealedSecret: 'sealed',
    reason: 'registered', expiresAt: epochSeconds(NOW) + 600, ...overrides,
  };
}

describe('client repository', () => {
  const { doc, table, repos: { clients: repo }, requests } = useRepoTable();

  const withoutKey = ({ keyHash: _keyHash, ...rest }: SecretReveal) => rest;

  describe('registration', () => {
    it('stores an application as registered, and refuses to overwrite it', async () => {
      const client = makeClient();
      await repo.createClient(client);

      await expect(repo.createClient({ ...client, name: 'Overwritten' })).rejects.toThrow();
      expect(await repo.getClient(client.clientId)).toEqual(client);
      expect(await repo.getClient(randomUUID())).toBeUndefined();
    });

    it('registers an application with its secret to show once, or neither when the id is taken', async () => {
      const client = makeClient();
      const reveal = makeReveal(client);
      await repo.registerClient(client, reveal);
      expect(await repo.getClient(client.clientId)).toEqual(client);

      const clash = makeReveal(client);
      await expect(repo.registerClient({ ...client, name: 'Other' }, clash)).rejects.toThrow();
      expect(await repo.takeSecretReveal(clash.keyHash, client.clientId, client.developerId, NOW)).toBeUndefined();
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, client.developerId, NOW)).toEqual(withoutKey(reveal));
    });
  });

  describe('clientsRead', () => {
    it('answers aligned with the ids asked, reading nothing for an implausible or missing id', async () => {
      const client = makeClient();
      await repo.createClient(client);
      const batch = createBatchReader({ doc, table });

      const read = repo.clientsRead([undefined, 'x'.repeat(129), client.clientId, randomUUID(), client.clientId]);
      const [answer] = await batch.read([read]);

      expect(read.keys).toHaveLength(3);
      expect(answer).toEqual([undefined, undefined, client, undefined, client]);
    });
  });

  describe('takeSecretReveal', () => {
    it('gives the secret once to its developer for its application before its expiry, and to nobody else', async () => {
      const client = makeClient();
      const reveal = makeReveal(client, { reason: 'rotated' });
      await repo.registerClient(client, reveal);
      const expiry = new Date(reveal.expiresAt * 1000);

      expect(await repo.takeSecretReveal(reveal.keyHash, randomUUID(), client.developerId, NOW)).toBeUndefined();
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, randomUUID(), NOW)).toBeUndefined();
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, client.developerId, expiry)).toBeUndefined();
      expect(await repo.takeSecretReveal(hashSecret('another browser'), client.clientId, client.developerId, NOW)).toBeUndefined();
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, client.developerId, new Date(expiry.getTime() - 1000))).toEqual(withoutKey(reveal));
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, client.developerId, NOW)).toBeUndefined();
    });
  });

  describe('rotateSecret', () => {
    it('makes the current secret the previous one, replacing an older previous one', async () => {
      const client = makeClient({ previousSecretHash: hashSecret('oldest') });
      await repo.createClient(client);

      await repo.rotateSecret(client.developerId, client.clientId, hashSecret('new'), '2026-11-23T10:00:00.000', makeReveal(client, { reason: 'rotated' }));

      expect(await repo.getClient(client.clientId)).toEqual({
        ...client, secretHash: hashSecret('new'), previousSecretHash: client.secretHash, secretCreatedAt: '2026-11-23T10:00:00.000',
      });
    });

    it("refuses another developer's application and an unknown one as not found, changing nothing", async () => {
      const client = makeClient();
      await repo.createClient(client);
      const reveal = makeReveal(client);

      await expect(repo.rotateSecret(randomUUID(), client.clientId, hashSecret('new'), '2026-11-23T10:00:00.000', reveal)).rejects.toThrow(new NotFoundError('No such application.'));
      await expect(repo.rotateSecret(client.developerId, randomUUID(), hashSecret('new'), '2026-11-23T10:00:00.000', reveal)).rejects.toThrow(NotFoundError);
      expect(await repo.getClient(client.clientId)).toEqual(client);
      expect(await repo.takeSecretReveal(reveal.keyHash, client.clientId, client.developerId, NOW)).toBeUndefined();
    });

    it('answers a rotation that cannot store its secret to show as a conflict, changing nothing', async () => {
      const client = makeClient();
      const taken = makeReveal(client);
      await repo.registerClient(client, taken);

      await expect(repo.rotateSecret(client.developerId, client.clientId, hashSecret('new'), '2026-11-23T10:00:00.000', { ...taken, sealedSecret: 'other' }))
        .rejects.toThrow(new ConflictError('The application changed meanwhile. Reload the page and try again.'));
      expect(await repo.getClient(client.clientId)).toEqual(client);
    });
  });

  describe('retirePreviousSecret', () => {
    it("removes the previous secret of the developer's own application only", async () => {
      const client = makeClient({ previousSecretHash: hashSecret('old'), secretCreatedAt: '2026-11-20T00:00:00.000' });
      await repo.createClient(client);

      await expect(repo.retirePreviousSecret(randomUUID(), client.clientId)).rejects.toThrow(new NotFoundError('No such application.'));
      expect(await repo.getClient(client.clientId)).toEqual(client);
      await repo.retirePreviousSecret(client.developerId, client.clientId);
      const { previousSecretHash: _retired, ...rest } = client;
      expect(await repo.getClient(client.clientId)).toEqual(rest);
    });
  });

  describe('listClientsByDeveloper', () => {
    it("lists a developer's applications oldest first, and no one else's", async () => {
      const developerId = randomUUID();
      const newer = makeClient({ developerId, createdAt: '2026-11-02T00:00:00.000', name: 'Newer' });
      const older = makeClient({ developerId, createdAt: '2026-11-01T00:00:00.000', name: 'Older' });
      for (const client of [newer, older, makeClient()]) await repo.createClient(client);

      expect(await repo.listClientsByDeveloper(developerId)).toEqual([older, newer]);
      expect(await repo.listClientsByDeveloper(randomUUID())).toEqual([]);
    });
  });

  describe('updateClient', () => {
    it("changes the given fields of the developer's own application and keeps the others", async () => {
      const client = makeClient();
      await repo.createClient(client);

      await repo.updateClient(client.developerId, client.clientId, { name: 'Renamed', redirectUris: ['https://app.example.test/other'] });

      expect(await repo.getClient(client.clientId)).toEqual({ ...client, name: 'Renamed', redirectUris: ['https://app.example.test/other'] });
    });

    it("refuses another developer's application and an unknown one as not found, changing nothing", async () => {
      const client = makeClient();
      await repo.createClient(client);

      await expect(repo.updateClient(randomUUID(), client.clientId, { name: 'Stolen' })).rejects.toThrow(new NotFoundError('No such application.'));
      await expect(repo.updateClient(client.developerId, randomUUID(), { name: 'Ghost' })).rejects.toThrow(NotFoundError);
      expect(await repo.getClient(client.clientId)).toEqual(client);
    });

    it('sends nothing when nothing changes', async () => {
      requests.reset();
      await repo.updateClient(randomUUID(), randomUUID(), {});
      expect(requests.total).toBe(0);
    });
  });

  describe('deleteClientItem', () => {
    it("deletes the developer's own application in a transaction, and fails the transaction for anyone else", async () => {
      const client = makeClient();
      await repo.createClient(client);

      await expect(doc.send(new TransactWriteCommand({ TransactItems: [repo.deleteClientItem(randomUUID(), client.clientId)] }))).rejects.toThrow();
      expect(await repo.getClient(client.clientId)).toEqual(client);
      await doc.send(new TransactWriteCommand({ TransactItems: [repo.deleteClientItem(client.developerId, client.clientId)] }));
      expect(await repo.getClient(client.clientId)).toBeUndefined();
    });
  });
});

describe('client repository, when the storage itself fails', () => {
  it('passes the storage error on rather than answering "not found", "conflict" or "nothing to show"', async () => {
    const { doc, table } = await freshTable();
    // A table that does not exist: every request fails with ResourceNotFoundException.
    const broken = createClientRepo({ doc, table: `${table}-missing` });
    const client = makeClient();
    try {
      const storageError = { name: 'ResourceNotFoundException' };
      await expect(broken.rotateSecret(client.developerId, client.clientId, 'h', '2026-11-23T10:00:00.000', makeReveal(client))).rejects.toMatchObject(storageError);
      await expect(broken.retirePreviousSecret(client.developerId, client.clientId)).rejects.toMatchObject(storageError);
      await expect(broken.takeSecretReveal('k', client.clientId, client.developerId, NOW)).rejects.toMatchObject(storageError);
      await expect(broken.updateClient(client.developerId, client.clientId, { name: 'x' })).rejects.toMatchObject(storageError);
    } finally {
      doc.destroy();
    }
  });
});
