import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { preProvision } from '#shared/devices/fleet-provisioning';
import { hashSecret, randomToken } from '#shared/secrets';
import { makeDevice } from '../support/factories';
import { useRepoTable } from '../support/repos';

// The pre-provisioning hook under IoT Core's own behaviour against DynamoDB Local: many devices
// racing with one serial (a copied label, a leaked claim certificate), and IoT Core asking again for the
// certificate it already admitted (a device's retry of RegisterThing with the same token).

/** IoT Core's request to the hook, with every field it sends. */
const request = (serial: string, certificateId = randomBytes(32).toString('hex')) => ({
  claimCertificateId: 'c'.repeat(64), certificateId, certificatePem: '-----BEGIN CERTIFICATE-----\n…', clientId: 'factory-7',
  templateArn: 'arn:aws:iot:us-east-1:123456789012:provisioningtemplate/devices', parameters: { SerialNumber: serial },
});

describe('the pre-provisioning hook, raced and retried', () => {
  const { repos } = useRepoTable();
  const deps = { serials: repos.serials, devices: repos.devices, warn: () => undefined };

  async function listed() {
    const device = makeDevice({ connected: false });
    await repos.claims.createUnclaimedDevice(device, hashSecret(randomToken()));
    const serial = `SN-${randomUUID().slice(0, 13)}`;
    await repos.serials.allowSerial(serial, device.id);
    return { serial, deviceId: device.id };
  }

  it('admits exactly one of a dozen certificates racing for one serial', async () => {
    const { serial, deviceId } = await listed();
    const answers = await Promise.allSettled(Array.from({ length: 12 }, () => preProvision(deps, request(serial))));
    const allowed = answers.filter((a) => a.status === 'fulfilled' && a.value.allowProvisioning);
    expect(allowed).toHaveLength(1);
    expect(allowed[0]).toMatchObject({ value: { parameterOverrides: { ThingName: deviceId } } });
  });

  it('admits IoT Core\'s retry of the certificate it admitted, and no other', async () => {
    const { serial, deviceId } = await listed();
    const first = request(serial);
    expect(await preProvision(deps, first)).toEqual({ allowProvisioning: true, parameterOverrides: { ThingName: deviceId } });
    expect(await preProvision(deps, first)).toEqual({ allowProvisioning: true, parameterOverrides: { ThingName: deviceId } });
    expect(await preProvision(deps, request(serial))).toEqual({ allowProvisioning: false });
  });

});
