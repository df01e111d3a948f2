import type { Uses, UsesDeclaration } from '#shared/data/uses';

// Fleet provisioning by claim: a device leaves the factory with a claim certificate shared by its
// batch and its serial number; at its first connection it asks IoT Core for its own certificate and
// registers with the provisioning template, which asks this hook first (AWS IoT Core Developer
// Guide, "Pre-provisioning hooks"). Only a serial of the allow-list, once, becomes its device.

/** The repository operations preProvision uses (its function's grants: functions/needs.ts). */
export const PRE_PROVISION_USES = { serials: ['getSerial', 'takeSerial'], devices: ['findDeviceOwner'] } as const satisfies UsesDeclaration;

export type PreProvisionDeps = Uses<typeof PRE_PROVISION_USES> & { warn(message: string, facts: Record<string, unknown>): void };

/** The hook's answer, as IoT Core reads it: allowed or not, and the template's parameters it overrides. */
export interface PreProvisionAnswer {
  allowProvisioning: boolean;
  parameterOverrides?: Record<string, string>;
}

/** The template parameter that carries the serial number, and the one that names the thing. */
export const SERIAL_PARAMETER = 'SerialNumber';
export const THING_NAME_PARAMETER = 'ThingName';

const SERIAL = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
/** Whether `value` can be a serial number: letters, digits and dashes, 1–64 of them, starting with a letter or digit. */
export const isSerialNumber = (value: string): boolean => SERIAL.test(value);
const CERTIFICATE_ID = /^[0-9a-f]{64}$/;

/** The serial and certificate of a hook request, or why it is refused (no I/O). */
function parseRequest(event: unknown): { serial: string; certificateId: string } | string {
  if (typeof event !== 'object' || event === null) return 'not-an-object';
  const { parameters, certificateId } = event as { parameters?: unknown; certificateId?: unknown };
  const serial = typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>)[SERIAL_PARAMETER] : undefined;
  if (typeof serial !== 'string' || !SERIAL.test(serial)) return 'bad-serial';
  if (typeof certificateId !== 'string' || !CERTIFICATE_ID.test(certificateId)) return 'bad-certificate-id';
  return { serial, certificateId };
}

/**
 * Decides a device's registration: a well-formed request whose serial is on the allow-list and not
 * used yet (or used by this very certificate: a retry) is allowed, named as the serial's device (`ThingName` overridden, whatever the device
 * sent), and the serial is used up with the device's certificate recorded on its item, whether it
 * still waits for an owner or was claimed already (one transaction, takeSerial; a claimed device's
 * owner found first), so that removing the device deactivates it. Anything else is refused,
 * logged with why (never with the certificate), and writes nothing.
 */
export async function preProvision(deps: PreProvisionDeps, event: unknown): Promise<PreProvisionAnswer> {
  const request = parseRequest(event);
  if (typeof request === 'string') {
    deps.warn('provisioning refused', { reason: request });
    return { allowProvisioning: false };
  }
  const entry = await deps.serials.getSerial(request.serial);
  // IoT Core asking again for the certificate it was allowed (the device's retry of RegisterThing): allowed again, nothing written.
  if (entry?.status === 'provisioned' && entry.certificateId === request.certificateId) {
    return { allowProvisioning: true, parameterOverrides: { [THING_NAME_PARAMETER]: entry.deviceId } };
  }
  if (!entry || entry.status !== 'allowed') {
    deps.warn('provisioning refused', { reason: entry ? 'serial-used' : 'serial-not-allowed' });
    return { allowProvisioning: false };
  }
  // The device of nobody's, as it waits; or, when its owner claimed it from its label before its first start, the owner's.
  const taken = await deps.serials.takeSerial(request.serial, entry.deviceId, request.certificateId)
    || await deps.devices.findDeviceOwner(entry.deviceId).then((owner) => owner !== undefined && deps.serials.takeSerial(request.serial, entry.deviceId, request.certificateId, owner));
  if (!taken) {
    deps.warn('provisioning refused', { reason: 'serial-taken-meanwhile' });
    return { allowProvisioning: false };
  }
  return { allowProvisioning: true, parameterOverrides: { [THING_NAME_PARAMETER]: entry.deviceId } };
}
