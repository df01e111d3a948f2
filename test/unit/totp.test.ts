import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { describe, expect, it } from 'vitest';
import {
  newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, readFactorCode, RECOVERY_CODE_COUNT, recoveryCodeHash, TOTP_PERIOD,
  totpStep, totpStepOf, totpUri,
} from '#shared/accounts/totp';
import { qrCodeDataUrl } from '#shared/views/qr-code';

// RFC 6238 Appendix B's SHA-1 seed, "12345678901234567890", in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const T = 59_000; // RFC 6238's first test time, 59 s: step 1, code 94287082 (8 digits), 287082 in 6
const at = (secret: string, ms: number) => generateSync({ secret, crypto, base32, epoch: Math.floor(ms / 1000) });

describe('authenticator codes (RFC 6238)', () => {
  it('computes RFC 6238’s own test vector, 6 digits of 94287082 at 59 s', () => {
    expect(at(RFC_SECRET, T)).toBe('287082');
    expect(totpStepOf(RFC_SECRET, '287082', T, -1)).toBe(1);
  });

  it('makes 160-bit base32 secrets, each new', () => {
    const secrets = new Set(Array.from({ length: 50 }, newTotpSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(base32.decode(secret)).toHaveLength(20);
    }
  });

  it('accepts the code of the step before, now and after, and refuses those two steps away', () => {
    const secret = newTotpSecret();
    const now = 1_800_000_000_000;
    const step = totpStep(now);
    expect(totpStepOf(secret, at(secret, now), now, -1)).toBe(step);
    expect(totpStepOf(secret, at(secret, now - TOTP_PERIOD * 1000), now, -1)).toBe(step - 1);
    expect(totpStepOf(secret, at(secret, now + TOTP_PERIOD * 1000), now, -1)).toBe(step + 1);
    expect(totpStepOf(secret, at(secret, now - 2 * TOTP_PERIOD * 1000), now, -1)).toBeUndefined();
    expect(totpStepOf(secret, at(secret, now + 2 * TOTP_PERIOD * 1000), now, -1)).toBeUndefined();
  });

  it('refuses a code of a step at or before the last one used, and takes the next', () => {
    const secret = newTotpSecret();
    const now = 1_800_000_015_000;
    const step = totpStep(now);
    expect(totpStepOf(secret, at(secret, now), now, step)).toBeUndefined();
    expect(totpStepOf(secret, at(secret, now), now, step - 1)).toBe(step);
    expect(totpStepOf(secret, at(secret, now - 30_000), now, step - 1)).toBeUndefined();
    expect(totpStepOf(secret, at(secret, now + 30_000), now, step)).toBe(step + 1);
    // Step 0 (the first 30 s of 1970) is a step like any other.
    expect(totpStepOf(secret, at(secret, 15_000), 15_000, 0)).toBeUndefined();
    expect(totpStepOf(secret, at(secret, 15_000), 15_000, -1)).toBe(0);
  });

  it('refuses anything but six digits, and another secret’s code', () => {
    const secret = newTotpSecret();
    const now = 1_800_000_000_000;
    const code = at(secret, now);
    for (const typed of [code.slice(1), `${code}0`, ` ${code}`, code.replace(/\d$/, 'x'), '']) expect(totpStepOf(secret, typed, now, -1)).toBeUndefined();
    expect(totpStepOf(newTotpSecret(), code, now, -1) === undefined || code === at(newTotpSecret(), now)).toBe(true);
  });

  it('names the service and the account in the otpauth:// URI with the secret, and the defaults every app assumes', () => {
    const uri = new URL(totpUri('ABCDEFGH', 'ada@example.com', 'Device and User Service'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Device and User Service:ada@example.com');
    expect(uri.searchParams.get('secret')).toBe('ABCDEFGH');
    expect(uri.searchParams.get('issuer')).toBe('Device and User Service');
    for (const name of ['algorithm', 'digits', 'period']) expect([null, { algorithm: 'SHA1', digits: '6', period: '30' }[name]]).toContain(uri.searchParams.get(name));
  });

  it('draws the URI as an SVG QR code in a data: URL, larger for a longer text', () => {
    const small = qrCodeDataUrl('otpauth://x'); // 11 bytes: version 1 at level M holds 14
    const large = qrCodeDataUrl(`otpauth://totp/${'x'.repeat(200)}?secret=A`);
    expect(small).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/);
    const svg = Buffer.from(small.split(',')[1]!, 'base64').toString();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges"><rect width="\1" height="\1" fill="#fff"\/><path d="(M\d+ \d+h1v1h-1z)+" fill="#000"\/><\/svg>$/);
    // Version 1 is 21 modules, plus a quiet zone of 4 on each side.
    expect(svg).toContain('viewBox="0 0 29 29"');
    // The finder pattern's corner module is dark, just inside the quiet zone; the ring inside it light.
    expect(svg).toContain('M4 4h1v1h-1z');
    expect(svg).not.toContain('M5 5h1v1h-1z');
    // Every dark module is inside the 21 × 21 symbol.
    for (const [, x, y] of svg.matchAll(/M(\d+) (\d+)h/g)) {
      expect(Number(x)).toBeGreaterThanOrEqual(4);
      expect(Number(x)).toBeLessThan(25);
      expect(Number(y)).toBeLessThan(25);
    }
    expect(large.length).toBeGreaterThan(small.length);
  });
});

describe('recovery codes', () => {
  it('makes 10 different codes of 16 unambiguous characters in four groups', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(RECOVERY_CODE_COUNT).toBe(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-hjkmnp-z2-9]{4}(-[a-hjkmnp-z2-9]{4}){3}$/);
    expect(new Set(codes.join('').replace(/-/g, '')).size).toBeGreaterThan(20);
  });

  it('reads a code in any case, with or without dashes and spaces, and refuses other lengths and letters', () => {
    expect(normalizeRecoveryCode('abcd-efgh-jkmn-pqrs')).toBe('abcdefghjkmnpqrs');
    expect(normalizeRecoveryCode(' ABCD EFGH jkmn-PQRS ')).toBe('abcdefghjkmnpqrs');
    expect(normalizeRecoveryCode('abcdefghjkmnpqr')).toBeUndefined();
    expect(normalizeRecoveryCode('abcdefghjkmnpqrst')).toBeUndefined();
    for (const lookAlike of ['0', '1', 'i', 'l', 'o']) expect(normalizeRecoveryCode(`abcdefghjkmnpqr${lookAlike}`)).toBeUndefined();
  });

  it('hashes a code per user, the same however it is typed, never containing it', () => {
    const hash = recoveryCodeHash('user-1', 'abcd-efgh-jkmn-pqrs');
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(recoveryCodeHash('user-1', 'ABCDEFGHJKMNPQRS')).toBe(hash);
    expect(recoveryCodeHash('user-2', 'abcd-efgh-jkmn-pqrs')).not.toBe(hash);
    expect(recoveryCodeHash('user-1', 'abcd-efgh-jkmn-pqrt')).not.toBe(hash);
  });

  it('tells the second-factor field apart: six digits, a recovery code, or neither', () => {
    expect(readFactorCode('123456')).toEqual({ kind: 'totp', code: '123456' });
    expect(readFactorCode(' 123 456 ')).toEqual({ kind: 'totp', code: '123456' });
    expect(readFactorCode('abcd-efgh-jkmn-pqrs')).toEqual({ kind: 'recovery', code: 'abcdefghjkmnpqrs' });
    for (const typed of ['12345', '1234567', '', 'abcd-efgh', '12345a']) expect(readFactorCode(typed)).toEqual({ kind: 'malformed' });
  });
});
