import { randomInt } from 'node:crypto';
import { USER_CODE_ALPHABET } from '#shared/domain/device-authorization';

// Claim codes: printed on a new device (or shown by it), typed by its owner on the account's device
// page to add it. A device belongs to nobody until then. Unlike the device flow's user codes they
// live as long as the device waits for an owner, so they are longer: never guessable, even counted.

/**
 * The claim code's alphabet: the device flow's twenty consonants (no vowels, so no words, and no
 * letters that look alike). Sixteen of them: 20^16 ≈ 6.6·10^20 codes, about 69 bits, shown as
 * `BCDF-GHJK-LMNP-QRST`; with the entry limits below, a guesser's chance is nil for centuries.
 */
export const CLAIM_CODE_ALPHABET = USER_CODE_ALPHABET;
export const CLAIM_CODE_LENGTH = 16;

/** Claim code entries counted per account and per source address in one window, like the device flow's user codes. */
export const CLAIM_ENTRIES_PER_ACCOUNT = 20;
export const CLAIM_ENTRIES_PER_ADDRESS = 60;
export const CLAIM_WINDOW_SECONDS = 600;

/** A new claim code, in its canonical form (upper case, no separator), from the system's CSPRNG. */
export function newClaimCode(): string {
  let code = '';
  for (let i = 0; i < CLAIM_CODE_LENGTH; i++) code += CLAIM_CODE_ALPHABET[randomInt(CLAIM_CODE_ALPHABET.length)];
  return code;
}

/** A claim code as printed: four groups of four, `BCDF-GHJK-LMNP-QRST`. */
export const formatClaimCode = (code: string) => code.match(/.{1,4}/g)!.join('-');

/**
 * What the owner typed, in canonical form, or undefined when it cannot be a claim code: case,
 * spaces and dashes are ignored; any other character, or another length, is refused before anything
 * is counted or read.
 */
export function normalizeClaimCode(typed: string | undefined): string | undefined {
  if (typed === undefined || typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  return code.length === CLAIM_CODE_LENGTH && [...code].every((c) => CLAIM_CODE_ALPHABET.includes(c)) ? code : undefined;
}
