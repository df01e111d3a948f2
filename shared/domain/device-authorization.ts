import { randomInt } from 'node:crypto';
import type { TokenFamily } from '#shared/domain/grant';

// The device authorization grant (RFC 8628): a device without a browser (a TV, a hub, a command-line
// tool) shows a short user code; its owner types it at /device on a phone or a computer, signs in and
// consents, while the device polls the token endpoint with its device code.

/** Lifetime of a device code and its user code (`expires_in`, docs/api.md#limits). */
export const DEVICE_CODE_TTL_SECONDS = 600;
/** The polling interval a device is told (`interval`), and the step a `slow_down` adds to it (RFC 8628 §3.5). */
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * The user code's alphabet: RFC 8628 §6.1's twenty upper-case consonants, no vowels (no words) and
 * none that look alike (no 0/O, 1/I/L, 5/S, 8/B among digits, since there are none). Eight of them:
 * 20^8 ≈ 2.6·10^10 codes, about 34.5 bits, shown as `BCDF-GHJK`.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A new user code, in its canonical form (upper case, no separator). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** A user code as shown and sent: `BCDF-GHJK`. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * What the user typed, in canonical form, or undefined when it cannot be a user code: case is
 * ignored, and so are spaces and dashes anywhere (people type `bcdf ghjk`, `BCDF-GHJK`); anything
 * else, or another length, is refused before any lookup.
 */
export function normalizeUserCode(typed: string | undefined): string | undefined {
  if (typed === undefined || typed.length > 32) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  return code.length === USER_CODE_LENGTH && [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

/**
 * A device authorization as stored: the first state of the token family it starts, in the family's
 * item (as an authorization code is), so that once approved its redemption is one transaction that
 * turns it into the family. The device code is `<family id>.<256-bit random>`: the id names the
 * item, and only the hash of the whole value is stored.
 */
export interface DeviceAuthorization {
  familyId: string;
  clientId: string;
  scopes: string[];
  /** Waiting for the user, approved by them (with `userId` and `grantGeneration`), or denied. */
  status: 'device_pending' | 'device_approved' | 'device_denied';
  deviceCodeHash: string;
  /** Whether the client authenticates with a secret: a poll must then present it (a public client names itself). */
  confidential: boolean;
  /** Milliseconds a device must wait between polls: POLL_INTERVAL_SECONDS, plus SLOW_DOWN_STEP_SECONDS for each slow_down. */
  intervalMs: number;
  /** Epoch milliseconds from which the next poll is on time (set by each poll). */
  nextPollAt?: number;
  /** Epoch seconds: the TTL of the device code (and of its user code's item). */
  expiresAt: number;
  /** Set by the approval. */
  userId?: string;
  grantGeneration?: string;
}

/** What a device code's item may be: the authorization, or the family its redemption made it (which keeps the code's hash). */
export type DeviceCodeItem = DeviceAuthorization | (TokenFamily & { deviceCodeHash: string });

/** Whether the item is still the device authorization (not yet the family its redemption made). */
export const isDeviceAuthorization = (item: DeviceCodeItem): item is DeviceAuthorization => item.status.startsWith('device_');

/** The user code's item: which device authorization it names, until it is used or expires. */
export interface UserCode {
  familyId: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

/**
 * Entries of a user code allowed per window (each entry and each decision counts, found or not,
 * reserved before the lookup): per signed-in account, and per source address across accounts.
 * With 20 entries per 10 minutes an account tries at most 2,880 codes a day, each with a chance of
 * (live codes) / 20^8 of naming one: about one in ten thousand a day with a thousand codes waiting.
 */
export const USER_CODE_ENTRIES_PER_ACCOUNT = 20;
export const USER_CODE_ENTRIES_PER_ADDRESS = 60;
export const USER_CODE_WINDOW_SECONDS = 600;
