/**
 * Fleet provisioning by claim (AWS IoT Core): a device leaves the factory with a claim certificate
 * shared by its batch, asks IoT Core for a certificate of its own (CreateKeysAndCertificate) and
 * registers (RegisterThing) with its serial number as the template's `SerialNumber` parameter. The
 * pre-provisioning hook admits it only when the operator has listed that serial; the thing it gets
 * is named by the device id the serial was listed with.
 */

/** The provisioning template's parameter that carries the device's serial number. */
export const SERIAL_PARAMETER = 'SerialNumber';
/** The provisioning template's parameter the hook sets: the thing's name, the serial's device id. */
export const THING_NAME_PARAMETER = 'ThingName';

/** A serial number as makers print them: 3 to 64 letters, digits, dots, dashes and underscores, starting with a letter or digit. */
const SERIAL = /^[A-Za-z0-9][A-Za-z0-9._-]{2,63}$/;
/** IoT Core's certificate ids: the SHA-256 of the certificate, 64 hexadecimal digits. */
const CERTIFICATE_ID = /^[0-9a-f]{64}$/;
/** The hook's input is a few hundred bytes, the certificate's PEM included; anything far larger is not IoT Core's. */
export const HOOK_INPUT_MAX_BYTES = 16_384;

/** True when `value` has the shape of a serial number (what the operator may list and a device may send). */
export function isSerial(value: unknown): value is string {
  return typeof value === 'string' && SERIAL.test(value);
}

/** What the hook reads of IoT Core's request ("Pre-provisioning hooks" in the AWS IoT Core Developer Guide). */
export interface ProvisioningRequest {
  /** The new certificate the device asks to have attached to its thing. */
  certificateId: string;
  serial: string;
}

/** Why a provisioning request is refused before any storage is asked. */
export type ProvisioningRequestProblem = 'too-large' | 'not-an-object' | 'bad-certificate-id' | 'no-serial';

/** Reads the hook's input: the request, or the first problem that makes it unusable. */
export function parseProvisioningRequest(input: unknown): { request: ProvisioningRequest } | { problem: ProvisioningRequestProblem } {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(input) ?? '');
  } catch {
    return { problem: 'not-an-object' };
  }
  if (size > HOOK_INPUT_MAX_BYTES) return { problem: 'too-large' };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { problem: 'not-an-object' };
  const raw = input as Record<string, unknown>;
  if (typeof raw.certificateId !== 'string' || !CERTIFICATE_ID.test(raw.certificateId)) return { problem: 'bad-certificate-id' };
  const parameters = raw.parameters;
  const serial = typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>)[SERIAL_PARAMETER] : undefined;
  if (!isSerial(serial)) return { problem: 'no-serial' };
  return { request: { certificateId: raw.certificateId, serial } };
}

/** The hook's answer: provisioning goes on only with `allowProvisioning: true`. */
export type ProvisioningAnswer = { allowProvisioning: false } | { allowProvisioning: true; parameterOverrides: Record<string, string> };
