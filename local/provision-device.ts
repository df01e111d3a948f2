import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaimRepo } from '#shared/data/claim-repo';
import type { DeviceRepo } from '#shared/data/device-repo';
import { formatClaimCode, newClaimCode } from '#shared/domain/claim-code';
import { normalizeDeviceId, parseDeviceChanges, type Device } from '#shared/domain/device';
import { hashSecret } from '#shared/secrets';
import type { DeviceRegistry } from '#local/device-registry';
import type { SerialRepo } from '#shared/data/serial-repo';
import { isSerialNumber } from '#shared/devices/fleet-provisioning';

// `npm run admin -- provision-device` without an owner: a device provisioned to nobody, with its IoT
// identity (certificate and key files) and its claim code, printed once for its label.

export interface ProvisionDeps {
  claims: ClaimRepo;
  devices: Pick<DeviceRepo, 'findDeviceOwner'>;
  registry: DeviceRegistry;
  /** Where the certificate and key files go (`<device id>.cert.pem`, `<device id>.key.pem`). */
  outDir: string;
}

export interface ProvisionRequest {
  id?: string;
  name?: string;
  place?: string;
  reference?: string;
  latitude: number;
  longitude: number;
  version: string;
  now: string;
}

/** What the operator is shown, once: the claim code is not stored, only its hash. */
export interface Provisioned {
  provisioned: string;
  claimCode: string;
  certificateId: string;
  certificate: string;
  key: string;
  reset: boolean;
}

/**
 * Provisions a new device to nobody (`id` absent or unknown): checks its fields, gives it an IoT
 * identity, then writes it with its claim code (one transaction); or resets a device that belongs
 * to nobody (`id` of a freed one): a new identity and a new claim code, the previous certificate
 * deactivated. A device an account owns is refused: its owner removes it first. Throws an Error
 * whose message is for the operator; an identity made for a write that failed is deactivated.
 */
export async function provisionDevice(deps: ProvisionDeps, request: ProvisionRequest): Promise<Provisioned> {
  const id = request.id === undefined ? randomUUID() : normalizeDeviceId(request.id);
  if (!id) throw new Error(`${request.id} is not a device id (a UUID).`);
  if (await deps.devices.findDeviceOwner(id)) throw new Error(`Device ${id} belongs to an account: its owner removes it from the account first.`);
  const code = newClaimCode();
  const existing = await deps.claims.getUnclaimedDevice(id);
  let device: Device | undefined;
  if (!existing) {
    const { name, place, reference } = request;
    if (!name || !place || !reference || !/^[0-9a-f]+$/i.test(reference)) throw new Error('A new device needs --name, --place and a hexadecimal --reference.');
    parseDeviceChanges({ name, place });
    if (![request.latitude, request.longitude].every(Number.isFinite)) throw new Error('--latitude and --longitude are decimal degrees.');
    device = {
      id, name, place, reference, version: request.version, last_connection: request.now, active: false, connected: false, sound: true,
      latitude: request.latitude, longitude: request.longitude,
    };
  }
  const identity = await deps.registry.provision(id);
  try {
    if (existing) {
      if (!await deps.claims.reissueClaim(existing, hashSecret(code), identity.certificateId)) throw new Error(`Device ${id} changed meanwhile: run the command again.`);
      if (existing.certificateId) await deps.registry.deactivate(existing.certificateId);
    } else {
      await deps.claims.createUnclaimedDevice(device!, hashSecret(code), identity.certificateId);
    }
  } catch (error) {
    await deps.registry.deactivate(identity.certificateId).catch(() => undefined);
    throw error;
  }
  mkdirSync(deps.outDir, { recursive: true });
  const files = { certificate: join(deps.outDir, `${id}.cert.pem`), key: join(deps.outDir, `${id}.key.pem`) };
  writeFileSync(files.certificate, identity.certificatePem);
  writeFileSync(files.key, identity.privateKeyPem, { mode: 0o600 });
  return { provisioned: id, claimCode: formatClaimCode(code), certificateId: identity.certificateId, ...files, reset: existing !== undefined };
}

/**
 * A factory batch for fleet provisioning by claim: for each serial number a device that belongs to
 * nobody (without a certificate: the device gets its own at first connection), its claim code, and
 * the serial on the allow-list naming it. Every serial is checked (shape, not listed yet) before
 * anything is written. Returns the label sheet: serial, device id and claim code per line (CSV).
 */
export async function allowFactorySerials(
  deps: { claims: ClaimRepo; serials: SerialRepo }, serialList: string | undefined, device: { reference?: string; version: string; now: string },
): Promise<string> {
  const serials = (serialList ?? '').split(',').map((serial) => serial.trim()).filter(Boolean);
  if (serials.length === 0) throw new Error('Give the batch\'s serial numbers: --serials SN-1,SN-2,…');
  const malformed = serials.filter((serial) => !isSerialNumber(serial));
  if (malformed.length > 0) throw new Error(`Not serial numbers (letters, digits and dashes, up to 64): ${malformed.join(', ')}.`);
  if (new Set(serials).size !== serials.length) throw new Error('A serial number is given twice.');
  if (!device.reference || !/^[0-9a-f]+$/i.test(device.reference)) throw new Error('A batch needs the devices\' hexadecimal --reference.');
  const listed = (await Promise.all(serials.map(async (serial) => ((await deps.serials.getSerial(serial)) ? serial : undefined)))).filter(Boolean);
  if (listed.length > 0) throw new Error(`On the allow-list already: ${listed.join(', ')}.`);
  const lines = ['serial,device_id,claim_code'];
  for (const serial of serials) {
    const id = randomUUID();
    const code = newClaimCode();
    await deps.claims.createUnclaimedDevice({
      id, name: 'New device', place: 'Not set', reference: device.reference, version: device.version, last_connection: device.now,
      active: false, connected: false, sound: true, latitude: 0, longitude: 0,
    }, hashSecret(code));
    await deps.serials.allowSerial(serial, id);
    lines.push(`${serial},${id},${formatClaimCode(code)}`);
  }
  return `${lines.join('\n')}\n`;
}
