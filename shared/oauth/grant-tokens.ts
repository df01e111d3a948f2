import { randomUUID } from 'node:crypto';
import { hashSecret, randomToken } from '#shared/secrets';
import type { AuthorizationCode } from '#shared/domain/grant';

/**
 * Codes and refresh tokens are `<user id>.<family id>.<256-bit random token>`. The ids are no
 * secret: they name the family's item (a code is its first state) and the consent, so an exchange or
 * a refresh reads both (and the client) in one BatchGetItem. Only the hash of the whole value is
 * stored, in the family.
 */
const GRANT_TOKEN = /^([0-9A-Za-z-]{1,64})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[0-9A-Za-z_-]{43}$/;

/** What a code or refresh token names: its user and its family. */
export interface GrantTokenNames {
  userId: string;
  familyId: string;
}

/** The user and family a code or refresh token names, if it has the shape of one of ours. */
export function grantTokenNames(token: string): GrantTokenNames | undefined {
  const match = GRANT_TOKEN.exec(token);
  return match ? { userId: match[1]!, familyId: match[2]! } : undefined;
}

/** A new code or refresh token of a family. */
export const newGrantToken = (userId: string, familyId: string) => `${userId}.${familyId}.${randomToken()}`;

/** What a code is issued for: the user, client, request and consent generation. */
export type CodeGrant = Omit<AuthorizationCode, 'familyId' | 'codeHash' | 'status'>;

/**
 * A new authorization code for `grant`, in a new family: its value (given to the client once) and
 * what is stored of it (pending, with the value's hash).
 */
export function newAuthorizationCode(grant: CodeGrant): { code: string; stored: AuthorizationCode } {
  const familyId = randomUUID();
  const code = newGrantToken(grant.userId, familyId);
  return { code, stored: { ...grant, familyId, codeHash: hashSecret(code), status: 'pending' } };
}

/**
 * A device code (RFC 8628) is `<family id>.<256-bit random token>`: the id names the item of the
 * device authorization (the first state of its family); only the hash of the whole value is stored.
 */
const DEVICE_CODE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[0-9A-Za-z_-]{43}$/;

/** The family a device code names, if it has the shape of one of ours. */
export const deviceCodeFamily = (code: string): string | undefined => DEVICE_CODE.exec(code)?.[1];

/** A new device code, in a new family. */
export function newDeviceCode(): { familyId: string; deviceCode: string } {
  const familyId = randomUUID();
  return { familyId, deviceCode: `${familyId}.${randomToken()}` };
}
