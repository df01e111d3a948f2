import { randomBytes, randomInt } from 'node:crypto';
import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { verifySync } from '@otplib/totp';
import { generateTOTP } from '@otplib/uri';
import { hashSecret } from '#shared/secrets';

// Authenticator-app codes (RFC 6238 TOTP) and recovery codes: what they look like, how they are made
// and checked. Pure, given the time: storing them and spending them once is shared/data/factor-repo.ts'.
// The parameters are the ones every authenticator app reads from an otpauth:// URI without asking:
// SHA-1, 6 digits, 30 seconds (RFC 6238's defaults; Google Authenticator ignores any others).

/** Seconds per time step. */
export const TOTP_PERIOD = 30;
/** The steps either side of now whose code is accepted (a slow typist, a phone's clock a little off). */
const TOLERANCE_STEPS = 1;
/** How many recovery codes an enrolment gives. */
export const RECOVERY_CODE_COUNT = 10;

/** A new shared secret: 160 random bits (RFC 4226's recommended length), base32 as apps take it. */
export function newTotpSecret(): string {
  return base32.encode(randomBytes(20)); // 160 bits are 32 base32 characters: no padding
}

/** The otpauth:// URI an authenticator app reads from the QR code: the service's name and the account's address label it. */
export function totpUri(secret: string, account: string, serviceName: string): string {
  return generateTOTP({ issuer: serviceName, label: account, secret, period: TOTP_PERIOD, digits: 6, algorithm: 'sha1' });
}

/**
 * The time step of `code` for `secret` at `now` (epoch milliseconds), if it is a right code of a
 * step after `afterStep` (the last one accepted: a code is accepted once, and never an older one);
 * undefined otherwise. Compared in constant time by otplib.
 */
export function totpStepOf(secret: string, code: string, now: number, afterStep: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({
    secret, token: code, crypto, base32, epoch: Math.floor(now / 1000), period: TOTP_PERIOD, digits: 6, algorithm: 'sha1',
    epochTolerance: TOLERANCE_STEPS * TOTP_PERIOD, ...(afterStep >= 0 ? { afterTimeStep: afterStep } : {}),
  });
  return result.valid ? result.timeStep : undefined;
}

/** The time step of a moment (epoch milliseconds). */
export const totpStep = (now: number): number => Math.floor(now / 1000 / TOTP_PERIOD);

// Recovery codes: 16 characters of an alphabet without look-alikes (no 0/o, 1/l/i), 80 random
// bits each, shown in four groups; typed with or without the dashes, in any case.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_CODE_LENGTH = 16;

/** New recovery codes, as shown once (`abcd-efgh-jkmn-pqrs`). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: RECOVERY_CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

/** A recovery code as typed, in its stored form's shape, or undefined when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | undefined {
  const code = typed.toLowerCase().replace(/[\s-]/g, '');
  return code.length === RECOVERY_CODE_LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined;
}

/** The stored form of a recovery code of a user: a hash that names the user too, so a code of one account is nothing on another. */
export function recoveryCodeHash(userId: string, code: string): string {
  return hashSecret(`recovery:${userId}:${normalizeRecoveryCode(code) ?? code}`);
}

/** What a second-factor field holds: an authenticator code, a recovery code, or neither. */
export type FactorCode = { kind: 'totp'; code: string } | { kind: 'recovery'; code: string } | { kind: 'malformed' };

/** Reads the second-factor field: 6 digits (spaces allowed) are an authenticator code; a recovery code's shape is one. */
export function readFactorCode(typed: string): FactorCode {
  const digits = typed.replace(/\s/g, '');
  if (/^\d{6}$/.test(digits)) return { kind: 'totp', code: digits };
  const recovery = normalizeRecoveryCode(typed);
  return recovery ? { kind: 'recovery', code: recovery } : { kind: 'malformed' };
}
