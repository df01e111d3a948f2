import { randomUUID } from 'node:crypto';
import { GetCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { claimCodeKey, consentKey, deviceKey, unclaimedDeviceKey } from '#shared/data/item-keys';
import { newClaimCode } from '#shared/domain/claim-code';
import type { Consent } from '#shared/domain/grant';
import { ConflictError } from '#shared/errors';
import { hashSecret } from '#shared/secrets';
import { makeDevice } from '../support/factories';
import { useRepoTable } from '../support/repos';

// Devices changing hands (shared/data/claim-repo.ts), each access pattern against DynamoDB Local:
// provisioned to nobody with a claim code, claimed once by that code, freed with the consents
// rewritten, given a new code for the next owner.

describe('claim repository', () => {
  const { doc, table, repos: { claims, grants }, requests } = useRepoTable();

  const raw = async (key: Record<string, string>) => (await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

  /** An unclaimed device with a live code; the code's hash. */
  async function provisioned(certificateId?: string) {
    const device = makeDevice();
    const codeHash = hashSecret(newClaimCode());
    await claims.createUnclaimedDevice(device, codeHash, certificateId);
    requests.reset();
    return { device, codeHash };
  }

  it('provisions a device to nobody with its code and certificate, once: the same device again is a ConflictError, nothing written', async () => {
    const { device, codeHash } = await provisioned('cert-1');
    expect(await claims.getClaimCode(codeHash)).toEqual({ deviceId: device.id });
    const unclaimed = await claims.getUnclaimedDevice(device.id);
    expect(unclaimed).toMatchObject({ device, certificateId: 'cert-1', claimCodeHash: codeHash });

    const otherCode = hashSecret(newClaimCode());
    await expect(claims.createUnclaimedDevice(device, otherCode)).rejects.toBeInstanceOf(ConflictError);
    expect(await raw(claimCodeKey(otherCode))).toBeUndefined();
  });

  it('claims a device into the user\'s partition in one transaction, with its code used up: of ten concurrent claims one wins', async () => {
    const { device, codeHash } = await provisioned('cert-2');
    const unclaimed = (await claims.getUnclaimedDevice(device.id))!;
    const users = Array.from({ length: 10 }, () => randomUUID());

    const won = await Promise.all(users.map((userId) => claims.claimDevice(userId, codeHash, unclaimed)));

    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = users[won.indexOf(true)]!;
    expect(await raw(deviceKey(winner, device.id))).toMatchObject({ ...device, ownerId: winner, certificateId: 'cert-2', seq: 2 });
    expect(await raw(unclaimedDeviceKey(device.id))).toBeUndefined();
    expect(await raw(claimCodeKey(codeHash))).toBeUndefined();
    for (const loser of users.filter((u) => u !== winner)) expect(await raw(deviceKey(loser, device.id))).toBeUndefined();
  });

  it('frees a device: the owner\'s item marked, then moved out and dropped from the consents that name it, in one transaction', async () => {
    const { device, codeHash } = await provisioned('cert-3');
    const userId = randomUUID();
    expect(await claims.claimDevice(userId, codeHash, (await claims.getUnclaimedDevice(device.id))!)).toBe(true);
    const base = { userId, scopes: ['read_device'], grantedAt: '2026-01-01T00:00:00.000' };
    const consents: Consent[] = [
      { ...base, clientId: 'only', onlyDevices: [device.id, 'other'], revision: 3 },
      { ...base, clientId: 'except', exceptDevices: [device.id] },
    ];
    for (const consent of consents) await grants.saveConsent(consent);
    requests.reset();

    const item = await claims.markReleasing(userId, device.id, ['only'], 'token-1');
    expect(item).toMatchObject({ seenBy: ['only'], releasing: 'token-1', ownerId: userId });
    expect(await claims.releaseDevice(item!, 'another-token', consents)).toBe(false);
    expect(await raw(deviceKey(userId, device.id))).toBeDefined();
    expect(await claims.releaseDevice(item!, 'token-1', consents)).toBe(true);

    expect(await raw(deviceKey(userId, device.id))).toBeUndefined();
    const freed = await raw(unclaimedDeviceKey(device.id));
    expect(freed).toMatchObject({ id: device.id, certificateId: 'cert-3', connected: false, seq: 3 });
    expect(freed).not.toHaveProperty('ownerId');
    expect(freed).not.toHaveProperty('claimCodeHash');
    expect(await raw(consentKey(userId, 'only'))).toMatchObject({ onlyDevices: ['other'], revision: 4, deviceRelease: `${device.id} token-1` });
    const except = await raw(consentKey(userId, 'except'));
    expect(except).not.toHaveProperty('exceptDevices');
    expect(except).toMatchObject({ revision: 1 });
  });

  it('refuses to free a device when a consent changed since it was read: nothing written', async () => {
    const { device, codeHash } = await provisioned();
    const userId = randomUUID();
    await claims.claimDevice(userId, codeHash, (await claims.getUnclaimedDevice(device.id))!);
    const consent: Consent = { userId, clientId: 'only', scopes: ['read_device'], grantedAt: '2026-01-01T00:00:00.000', onlyDevices: [device.id], revision: 1 };
    await grants.saveConsent({ ...consent, revision: 2 });
    const item = await claims.markReleasing(userId, device.id, ['only'], 'token-2');

    expect(await claims.releaseDevice(item!, 'token-2', [consent])).toBe(false);
    expect(await raw(deviceKey(userId, device.id))).toBeDefined();
    expect(await raw(unclaimedDeviceKey(device.id))).toBeUndefined();
  });

  it('gives a freed device a new code (and certificate): only the newest code names it', async () => {
    const { device, codeHash } = await provisioned('cert-4');
    const first = hashSecret(newClaimCode());
    expect(await claims.reissueClaim((await claims.getUnclaimedDevice(device.id))!, first, 'cert-5')).toBe(true);
    expect(await raw(claimCodeKey(codeHash))).toBeUndefined();
    const unclaimed = (await claims.getUnclaimedDevice(device.id))!;
    expect(unclaimed).toMatchObject({ claimCodeHash: first, certificateId: 'cert-5' });
    // A reissue from a stale read (the code has changed since) writes nothing.
    const stale = hashSecret(newClaimCode());
    expect(await claims.reissueClaim({ ...unclaimed, claimCodeHash: codeHash }, stale)).toBe(false);
    expect(await raw(claimCodeKey(stale))).toBeUndefined();
    // The old code's item is gone; a claim naming the old hash fails on the device's condition.
    expect(await claims.claimDevice(randomUUID(), codeHash, unclaimed)).toBe(false);
  });

  it('counts claim entries per account and per address, at most the limit of concurrent ones', async () => {
    const limits = { account: 5, address: 100, windowSeconds: 600 };
    const userId = randomUUID();
    const counted = await Promise.all(Array.from({ length: 12 }, () => claims.countClaimEntry(userId, '192.0.2.7', limits, new Date())));
    expect(counted.filter(Boolean)).toHaveLength(5);
  });
});
