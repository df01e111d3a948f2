import { randomUUID } from 'node:crypto';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import {
  CLAIM_ENTRIES_PER_ACCOUNT, CLAIM_ENTRIES_PER_ADDRESS, CLAIM_WINDOW_SECONDS, normalizeClaimCode,
} from '#shared/domain/claim-code';
import type { Device } from '#shared/domain/device';
import { deviceVisible } from '#shared/domain/grant';
import { ConflictError } from '#shared/errors';
import { hashSecret } from '#shared/secrets';

// Owners adding their devices with a claim code, and removing them (docs/behaviour.md#devices-change-hands).

/** What turns a device's certificate off, so that the device can no longer connect (shared/aws/iot-certificates.ts). */
export interface DeviceCertificates {
  /** Deactivates the certificate (IoT Core's UpdateCertificate to INACTIVE); doing it again is harmless. */
  deactivate(certificateId: string): Promise<void>;
}

/** The IoT client's module, bundled on its own beside the function that removes devices (EndpointDeclaration.lazyModules). */
export const IOT_CERTIFICATES_ENTRY = 'shared/aws/iot-certificates.ts';

/** The repository operations claimDevice uses (its function's grants: functions/needs.ts). */
export const CLAIM_USES = { claims: ['countClaimEntry', 'getClaimCode', 'getUnclaimedDevice', 'claimDevice'] } as const satisfies UsesDeclaration;
/** The repository operations removeDevice uses. */
export const REMOVE_DEVICE_USES = { grants: ['listConsentsByUser'], claims: ['markReleasing', 'releaseDevice'] } as const satisfies UsesDeclaration;

export type ClaimDeps = Uses<typeof CLAIM_USES>;
export type RemoveDeviceDeps = Uses<typeof REMOVE_DEVICE_USES> & { certificates: () => DeviceCertificates };

/** Why an entered claim code adds nothing: the page says it, with the status. */
export type ClaimProblem = { problem: string; status: 400 | 429 };

export const MALFORMED_CLAIM_CODE = 'That is not a claim code: it has sixteen letters, like BCDF-GHJK-LMNP-QRST, as printed on your device.';
export const UNKNOWN_CLAIM_CODE = 'This claim code adds no device: it may have been used already. Check the code printed on your device, or the one it shows.';
export const TOO_MANY_CLAIMS = 'Too many claim codes were entered: wait ten minutes, then try again.';

/**
 * Adds the device a claim code names to the user's devices. A code that cannot be one is refused
 * before anything is counted or read. Every other entry is counted first (per account and per
 * address, atomic: countClaimEntry), so guessing is bounded however many requests run at once; then
 * the code (GetItem), the device it names (GetItem), and the claim: one transaction that uses the
 * code up and moves the device into the user's partition (its `device.added`). A code used meanwhile
 * claims nothing.
 */
export async function claimDevice(deps: ClaimDeps, typed: string | undefined, userId: string, address: string, now = new Date()): Promise<{ device: Device } | ClaimProblem> {
  const code = normalizeClaimCode(typed);
  if (!code) return { problem: MALFORMED_CLAIM_CODE, status: 400 };
  const limits = { account: CLAIM_ENTRIES_PER_ACCOUNT, address: CLAIM_ENTRIES_PER_ADDRESS, windowSeconds: CLAIM_WINDOW_SECONDS };
  if (!await deps.claims.countClaimEntry(userId, address, limits, now)) return { problem: TOO_MANY_CLAIMS, status: 429 };
  const codeHash = hashSecret(code);
  const named = await deps.claims.getClaimCode(codeHash);
  const unclaimed = named && await deps.claims.getUnclaimedDevice(named.deviceId);
  if (!unclaimed || unclaimed.claimCodeHash !== codeHash) return { problem: UNKNOWN_CLAIM_CODE, status: 400 };
  if (!await deps.claims.claimDevice(userId, codeHash, unclaimed)) return { problem: UNKNOWN_CLAIM_CODE, status: 400 };
  return { device: unclaimed.device };
}

/**
 * Removes a device from the user's account and frees it for its next owner: marks it with the
 * applications that see it (their `device.removed`), deactivates its certificate (the device can
 * no longer connect until it is provisioned again), then one transaction moves it out of the user's
 * partition and drops it from every consent that names it. Read again and tried again (three
 * times) when a consent changed meanwhile. False when the user owns no such device.
 */
export async function removeDevice(deps: RemoveDeviceDeps, userId: string, deviceId: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const consents = await deps.grants.listConsentsByUser(userId);
    const token = randomUUID();
    const seenBy = consents.filter((consent) => deviceVisible(consent, deviceId)).map((consent) => consent.clientId);
    const item = await deps.claims.markReleasing(userId, deviceId, seenBy, token);
    if (!item) return false;
    if (typeof item.certificateId === 'string') await deps.certificates().deactivate(item.certificateId);
    const naming = consents.filter((consent) => consent.onlyDevices?.includes(deviceId) || consent.exceptDevices?.includes(deviceId));
    if (await deps.claims.releaseDevice(item, token, naming)) return true;
  }
  throw new ConflictError('The device changed while it was being removed: try again.');
}
