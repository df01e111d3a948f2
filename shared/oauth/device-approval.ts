import { randomUUID } from 'node:crypto';
import type { BatchReader } from '#shared/data/batch-read';
import type { DeviceWriteOutcome } from '#shared/data/device-grant-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { Client } from '#shared/domain/client';
import {
  normalizeUserCode, USER_CODE_ENTRIES_PER_ACCOUNT, USER_CODE_ENTRIES_PER_ADDRESS, USER_CODE_WINDOW_SECONDS, type UserCode,
} from '#shared/domain/device-authorization';
import { allowedConsent, type Consent, type DeviceChoice } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { hashSecret } from '#shared/secrets';

// The /device page's side of the device flow (RFC 8628 §3.3): the signed-in user enters the code
// their device shows, sees who asks for what, and allows or denies.

/** The repository operations findDeviceRequest and decideDeviceRequest use (the /device page's grants: functions/needs.ts). */
export const DEVICE_APPROVAL_USES = {
  deviceGrants: ['countUserCodeEntry', 'getUserCode', 'decide'], clients: ['clientsRead'], grants: ['consentRead'],
} as const satisfies UsesDeclaration;

export type DeviceApprovalDeps = Uses<typeof DEVICE_APPROVAL_USES> & { batch: Pick<BatchReader, 'read'> };

/** A live user code, with the application it is for and the user's consent to it so far. */
export interface DeviceRequest {
  userCode: string;
  code: UserCode;
  client: Client;
  consent: Consent | undefined;
}

/** Why an entered code leads nowhere: the page says it, with the status. */
export type EntryProblem = { problem: string; status: 400 | 429 };

export const MALFORMED_CODE = 'That is not a device code: it has eight letters, like BCDF-GHJK, as your device shows it.';
export const UNKNOWN_CODE = 'This code is not valid: it may have expired or been used already. Check the code your device shows, or start again on the device.';
export const TOO_MANY_ENTRIES = 'Too many codes were entered: wait ten minutes, then try again.';

/**
 * Finds the request a code the user typed names. A code that cannot be one (wrong length or
 * letters) is refused before anything is counted or read. Every other entry is counted first
 * (countUserCodeEntry: per account and per address, atomic), so that guessing is bounded however
 * many requests run at once; then the user code is read (GetItem), then the application and the
 * user's consent to it (one BatchGetItem).
 */
export async function findDeviceRequest(
  deps: DeviceApprovalDeps, typed: string | undefined, userId: string, address: string, now = new Date(),
): Promise<DeviceRequest | EntryProblem> {
  const userCode = normalizeUserCode(typed);
  if (!userCode) return { problem: MALFORMED_CODE, status: 400 };
  const limits = { account: USER_CODE_ENTRIES_PER_ACCOUNT, address: USER_CODE_ENTRIES_PER_ADDRESS, windowSeconds: USER_CODE_WINDOW_SECONDS };
  if (!await deps.deviceGrants.countUserCodeEntry(userId, address, limits, now)) return { problem: TOO_MANY_ENTRIES, status: 429 };
  const code = await deps.deviceGrants.getUserCode(hashSecret(userCode));
  // DynamoDB deletes expired items late: until then they are not there.
  if (!code || code.expiresAt <= epochSeconds(now)) return { problem: UNKNOWN_CODE, status: 400 };
  const [[client], consent] = await deps.batch.read([deps.clients.clientsRead([code.clientId]), deps.grants.consentRead(userId, code.clientId)] as const);
  if (!client) return { problem: UNKNOWN_CODE, status: 400 };
  return { userCode, code, client, consent };
}

/**
 * Records the user's decision (deviceGrants.decide: one transaction, the user code used up): an
 * allow records the consent (the scopes already granted and the requested ones, the devices chosen,
 * or the previous choice without one) on condition that
 * it is still the one read, and approves the authorization under its generation; a deny denies it.
 */
export function decideDeviceRequest(
  deps: DeviceApprovalDeps, request: DeviceRequest, userId: string, decision: { allow: boolean; devices?: DeviceChoice }, now = new Date(),
): Promise<DeviceWriteOutcome> {
  const userCodeHash = hashSecret(request.userCode);
  // Stryker disable next-line ObjectLiteral: decide reads only `allow`, which an empty decision lacks, so it denies all the same
  if (!decision.allow) return deps.deviceGrants.decide(userCodeHash, request.code, { allow: false }, now);
  const consent = allowedConsent(request.consent, {
    userId, clientId: request.code.clientId, requested: request.code.scopes, grantedAt: formatTimestamp(now), freshGeneration: randomUUID(),
    ...(decision.devices ? { devices: decision.devices } : {}),
  });
  return deps.deviceGrants.decide(userCodeHash, request.code, { allow: true, consent, previous: request.consent }, now);
}

/** Whether findDeviceRequest found a request (rather than a problem). */
export const isDeviceRequest = (found: DeviceRequest | EntryProblem): found is DeviceRequest => 'code' in found;
