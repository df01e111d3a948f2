import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '#shared/data/commands';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceKey, userKey } from '#shared/data/item-keys';
import { DEVICE_FIELDS, type Device } from '#shared/domain/device';
import { ConflictError, NotFoundError } from '#shared/errors';
import { makeDevice } from '../support/factories';
import { useRepoTable } from '../support/repos';

describe('device repository', () => {
  const { doc, table, repos: { devices: repo }, requests } = useRepoTable();
  afterEach(() => requests.reset());

  /** Provisions devices for a new owner and returns both; not counted as the test's requests. */
  async function ownerWith(...devices: Device[]) {
    const ownerId = randomUUID();
    for (const device of devices) await repo.createDevice(ownerId, device);
    requests.reset();
    return { ownerId, devices };
  }

  /** The stored item, read without the repository. */
  async function rawItem(ownerId: string, deviceId: string) {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: deviceKey(ownerId, deviceId) }));
    requests.reset();
    return Item;
  }

  describe('listDevicesByOwner', () => {
    it("returns exactly the owner's devices, in id order, with one Query", async () => {
      // Prepare
      const mine = await ownerWith(makeDevice(), makeDevice({ name: 'Garage', active: true }), makeDevice({ name: 'Chalet' }));
      await ownerWith(makeDevice({ name: 'Someone else' }));

      // Act
      const devices = await repo.listDevicesByOwner(mine.ownerId);

      // Assess
      expect(devices).toEqual([...mine.devices].sort((a, b) => (a.id < b.id ? -1 : 1)));
      expect(requests.operations).toEqual(['QueryCommand']);
    });

    it('returns only public fields, never keys or the owner id', async () => {
      // Prepare
      const { ownerId } = await ownerWith(makeDevice());

      // Act
      const [device] = await repo.listDevicesByOwner(ownerId);

      // Assess
      expect(Object.keys(device!)).toEqual([...DEVICE_FIELDS]);
    });

    it("leaves out the owner's other items that share the partition (profile, consents)", async () => {
      // Prepare
      const { ownerId, devices } = await ownerWith(makeDevice());
      await doc.send(new PutCommand({ TableName: table, Item: { ...userKey(ownerId), id: ownerId, firstname: 'Alice' } }));
      await doc.send(new PutCommand({ TableName: table, Item: { pk: `USER#${ownerId}`, sk: 'CONSENT#client-1', scopes: ['read_device'] } }));
      requests.reset();

      // Act
      const listed = await repo.listDevicesByOwner(ownerId);

      // Assess
      expect(listed).toEqual(devices);
      expect(requests.total).toBe(1);
    });

    it('returns an empty list for a user without devices, with one Query', async () => {
      // Act
      const devices = await repo.listDevicesByOwner(randomUUID());

      // Assess
      expect(devices).toEqual([]);
      expect(requests.operations).toEqual(['QueryCommand']);
    });
  });

  describe('getOwnedDevice', () => {
    it('returns the owned device with one GetItem', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice(), makeDevice());

      // Act
      const found = await repo.getOwnedDevice(ownerId, device!.id);

      // Assess
      expect(found).toStrictEqual(device);
      expect(requests.operations).toEqual(['GetItemCommand']);
    });

    it("returns undefined for another user's device, with one GetItem", async () => {
      // Prepare
      const { devices: [theirs] } = await ownerWith(makeDevice());
      const { ownerId: me } = await ownerWith(makeDevice());

      // Act
      const found = await repo.getOwnedDevice(me, theirs!.id);

      // Assess
      expect(found).toBeUndefined();
      expect(requests.operations).toEqual(['GetItemCommand']);
    });

    it('returns undefined for a device that does not exist, with one GetItem', async () => {
      // Prepare
      const { ownerId } = await ownerWith(makeDevice());

      // Act
      const found = await repo.getOwnedDevice(ownerId, randomUUID());

      // Assess
      expect(found).toBeUndefined();
      expect(requests.operations).toEqual(['GetItemCommand']);
    });
  });

  describe('updateOwnedDevice', () => {
    it('changes only the members present, with one UpdateItem', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice({ name: 'Old', active: false }));

      // Act
      await repo.updateOwnedDevice(ownerId, device!.id, { name: 'New' });

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand']);
      expect(await repo.getOwnedDevice(ownerId, device!.id)).toEqual({ ...device, name: 'New' });
    });

    it('changes all four writable members at once', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice({ active: false, sound: true }));
      const changes = { name: 'Kitchen', place: 'Lyon house', active: true, sound: false };

      // Act
      await repo.updateOwnedDevice(ownerId, device!.id, changes);

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand']);
      expect(await repo.getOwnedDevice(ownerId, device!.id)).toEqual({ ...device, ...changes });
    });

    it('keeps the key, index and owner attributes of the item', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice());
      const before = await rawItem(ownerId, device!.id);

      // Act
      await repo.updateOwnedDevice(ownerId, device!.id, { sound: false });

      // Assess
      // …and adds one to its sequence number, which its webhook events carry; a device-side member's
      // change is an owner's command, numbered by that write's sequence (commandSeq: the shadow's desired state).
      expect(await rawItem(ownerId, device!.id)).toEqual({ ...before, sound: false, seq: Number(before!.seq) + 1, commandSeq: Number(before!.seq) + 1 });
    });

    it('treats {} as a no-op that costs one GetItem', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice());
      const before = await rawItem(ownerId, device!.id);

      // Act
      await repo.updateOwnedDevice(ownerId, device!.id, {});

      // Assess
      expect(requests.operations).toEqual(['GetItemCommand']);
      expect(await rawItem(ownerId, device!.id)).toEqual(before);
    });

    it("throws NotFoundError for another user's device and writes nothing, with one UpdateItem", async () => {
      // Prepare
      const { ownerId: owner, devices: [theirs] } = await ownerWith(makeDevice({ name: 'Theirs' }));
      const { ownerId: me } = await ownerWith();
      const before = await rawItem(owner, theirs!.id);

      // Act
      const attempt = repo.updateOwnedDevice(me, theirs!.id, { name: 'Mine now', active: true });

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(NotFoundError);
      expect(requests.operations).toEqual(['UpdateItemCommand']);
      expect(await rawItem(owner, theirs!.id)).toEqual(before);
      expect(await rawItem(me, theirs!.id)).toBeUndefined();
      expect(await repo.listDevicesByOwner(me)).toEqual([]);
    });

    it('throws NotFoundError for a device that does not exist and creates nothing', async () => {
      // Prepare
      const { ownerId } = await ownerWith(makeDevice());
      const missing = randomUUID();

      // Act
      const attempt = repo.updateOwnedDevice(ownerId, missing, { sound: false });

      // Assess
      await expect(attempt).rejects.toMatchObject({ status: 404, code: 'not_found' });
      expect(requests.operations).toEqual(['UpdateItemCommand']);
      expect(await rawItem(ownerId, missing)).toBeUndefined();
    });

    it("throws NotFoundError for {} on another user's device, with one GetItem", async () => {
      // Prepare
      const { devices: [theirs] } = await ownerWith(makeDevice());
      const { ownerId: me } = await ownerWith();

      // Act
      const attempt = repo.updateOwnedDevice(me, theirs!.id, {});

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(NotFoundError);
      expect(requests.operations).toEqual(['GetItemCommand']);
    });
  });

  describe('createDevice', () => {
    it('stores the device under its owner with its id index entry and owner id', async () => {
      // Prepare
      const ownerId = randomUUID();
      const device = makeDevice();

      // Act
      await repo.createDevice(ownerId, device);

      // Assess
      expect(requests.operations).toEqual(['PutItemCommand']);
      expect(await rawItem(ownerId, device.id)).toEqual({
        ...device,
        ...deviceKey(ownerId, device.id),
        gsi1pk: `DEVICE#${device.id}`,
        gsi1sk: 'DEVICE',
        seq: 1,
        ownerId,
      });
      expect(await repo.getOwnedDevice(ownerId, device.id)).toEqual(device);
    });

    it('refuses to overwrite an existing device and keeps the stored one', async () => {
      // Prepare
      const { ownerId, devices: [device] } = await ownerWith(makeDevice({ name: 'Original' }));
      const before = await rawItem(ownerId, device!.id);

      // Act
      const attempt = repo.createDevice(ownerId, { ...device!, name: 'Replacement', active: true });

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(ConflictError);
      expect(await rawItem(ownerId, device!.id)).toEqual(before);
    });
  });
});
