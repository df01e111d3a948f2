import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import type { DeviceCredentials } from '#local/iot-ca';
import { serviceFacts } from '#local/service';
import { claimDevice } from '#shared/devices/claiming';
import { newClaimCode } from '#shared/domain/claim-code';
import { hashSecret } from '#shared/secrets';
import { makeDevice, userNamed } from '../support/factories';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';

// A device deleted with its owner's account loses its IoT identity: the account's deletion removes
// the device's item, and the table's stream (the desired-state function, which reads the devices'
// changes) deactivates its certificate (UpdateCertificate INACTIVE, through the registry stand-in),
// so IoT Core refuses the device at its next CONNECT.

describe('deleting an account with a connected device', () => {
  const service = useTestService({ iot: true });
  const { repos } = useTable(service, { requestTimeoutMs: 10_000 });

  /** A device of a new account, given an IoT identity and claimed with its code, as provision-device and the devices page do it. */
  async function ownedDevice() {
    const user = userNamed('Noor', 'Haddad', { id: randomUUID(), email: `noor-${randomUUID()}@example.org` });
    await repos.users.createUser(user, 'scrypt$32768$8$1$c2FsdA$aGFzaA');
    const device = makeDevice({ connected: false });
    const creds = await service.iot!.ca.issue(device.id);
    service.iot!.registry.attach(creds.certificateId, device.id);
    const code = newClaimCode();
    await repos.claims.createUnclaimedDevice(device, hashSecret(code), creds.certificateId);
    expect(await claimDevice({ claims: repos.claims }, code, user.id, '192.0.2.9')).toMatchObject({ device: { id: device.id } });
    return { user, creds };
  }
  /** Whether the broker lets the device connect with its certificate (CONNACK 0), or refuses it (5). */
  async function connects(creds: DeviceCredentials): Promise<boolean> {
    const client = mqtt.connect(service.iot!.broker.url, {
      clientId: creds.thingName, cert: creds.certPem, key: creds.keyPem, ca: service.iot!.ca.certPem, reconnectPeriod: 0, protocolVersion: 4,
    });
    try {
      return await new Promise<boolean>((resolve, reject) => {
        client.once('connect', () => resolve(true));
        client.once('error', (error: Error & { code?: number }) => (error.code === 5 ? resolve(false) : reject(error)));
      });
    } finally {
      await client.endAsync(true);
    }
  }

  it('deactivates the device\'s certificate: refused at its next connection', async () => {
    const { user, creds } = await ownedDevice();
    expect(await connects(creds)).toBe(true);

    const stateDir = mkdtempSync(join(tmpdir(), 'dus-deletion-'));
    try {
      writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
      const deleted = await runTool('local/admin.ts', ['delete-user', '--email', user.email], { STATE_DIR: stateDir, TABLE_NAME: '' });
      expect(deleted.code, deleted.stderr).toBe(0);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    await service.iot!.settled();

    expect(service.iot!.registry.calls().filter((call) => call.operation === 'UpdateCertificate' && call.target === creds.certificateId)).toHaveLength(1);
    expect(await connects(creds)).toBe(false);
  }, 90_000);
});
