import { describe, expect, it } from 'vitest';
import {
  CLAIM_CODE_ALPHABET, CLAIM_CODE_LENGTH, formatClaimCode, newClaimCode, normalizeClaimCode,
} from '#shared/domain/claim-code';

describe('claim codes', () => {
  it('are sixteen letters of twenty unambiguous consonants: at least 69 bits, no two alike in 2,000', () => {
    expect(CLAIM_CODE_LENGTH * Math.log2(CLAIM_CODE_ALPHABET.length)).toBeGreaterThan(69);
    expect(CLAIM_CODE_ALPHABET).not.toMatch(/[AEIOUY01258]/);
    const codes = Array.from({ length: 2000 }, newClaimCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(new RegExp(`^[${CLAIM_CODE_ALPHABET}]{${CLAIM_CODE_LENGTH}}$`));
    // Every letter turns up: the draw covers the whole alphabet.
    expect(new Set(codes.join('')).size).toBe(CLAIM_CODE_ALPHABET.length);
  });

  it('print in four groups and read back as typed: any case, spaces and dashes', () => {
    const code = newClaimCode();
    const printed = formatClaimCode(code);
    expect(printed).toMatch(/^[A-Z]{4}-[A-Z]{4}-[A-Z]{4}-[A-Z]{4}$/);
    expect(normalizeClaimCode(printed)).toBe(code);
    expect(normalizeClaimCode(` ${printed.toLowerCase().replaceAll('-', ' ')} `)).toBe(code);
  });

  it.each([
    ['nothing', undefined], ['a vowel', 'BCDF-GHJK-LMNP-QRSA'], ['a digit', 'BCDF-GHJK-LMNP-QRS1'], ['one letter short', 'BCDF-GHJK-LMNP-QRS'],
    ['one letter more', 'BCDF-GHJK-LMNP-QRSTV'], ['another separator', 'BCDF_GHJK_LMNP_QRST'], ['a huge input', 'B'.repeat(10_000)],
  ])('refuse %s before any look-up', (_label, typed) => {
    expect(normalizeClaimCode(typed)).toBeUndefined();
  });
});
