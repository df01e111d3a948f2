import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeviceRepo, type DeviceRepo } from '#shared/data/device-repo';
import { NotFoundError } from '#shared/errors';
import { freshTable } from '../support/service';
import { makeDevice } from '../support/factories';


describe('operator access patterns on devices', () => {
  let repo: DeviceRepo;
  let destroy: () => void;
  beforeAll(async () => {
    const { doc, table } = await freshTable();
    repo = createDeviceRepo({ doc, table });
    destroy = () => doc.destroy();
  });
  afterAll(() => destroy());

  it('finds a device owner by device id through GSI1', async () => {
    const owner = randomUUID();
    const device = makeDevice();
    await repo.createDevice(owner, device);

    expect(await repo.findDeviceOwner(device.id)).toBe(owner);
    expect(await repo.findDeviceOwner(randomUUID())).toBeUndefined();
  });

  it('records connection state, stamping last_connection only on connect', async () => {
    const owner = randomUUID();
    const device = makeDevice();
    await repo.createDevice(owner, device);

    await repo.setConnection(owner, device.id, true, '2026-02-02T10:00:00.000');
    expect(await repo.getOwnedDevice(owner, device.id)).toMatchObject({ connected: true, last_connection: '2026-02-02T10:00:00.000' });
    await repo.setConnection(owner, device.id, false, '2026-02-03T10:00:00.000');
    expect(await repo.getOwnedDevice(owner, device.id)).toMatchObject({ connected: false, last_connection: '2026-02-02T10:00:00.000' });
  });

  it('refuses to update the connection of a device that does not exist, writing nothing', async () => {
    const owner = randomUUID();
    const id = randomUUID();
    await expect(repo.setConnection(owner, id, true, '2026-02-02T10:00:00.000')).rejects.toBeInstanceOf(NotFoundError);
    expect(await repo.getOwnedDevice(owner, id)).toBeUndefined();
  });
});
