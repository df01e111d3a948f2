import { describe, expect, it } from 'vitest';
import {
  DEVICE_CODE_TTL_SECONDS, formatUserCode, isDeviceAuthorization, newUserCode, normalizeUserCode, POLL_INTERVAL_SECONDS, SLOW_DOWN_STEP_SECONDS,
  USER_CODE_ALPHABET, USER_CODE_ENTRIES_PER_ACCOUNT, USER_CODE_ENTRIES_PER_ADDRESS, USER_CODE_LENGTH, USER_CODE_WINDOW_SECONDS, type DeviceCodeItem,
} from '#shared/domain/device-authorization';
import { deviceCodeFamily, newDeviceCode } from '#shared/oauth/grant-tokens';

// The device flow's codes (RFC 8628): the user code a person types at /device, and the device
// code's shape. The flow itself: test/integration/device-grant.test.ts, test/e2e/device-flow.test.ts.

describe('user codes', () => {
  it('uses RFC 8628 §6.1\'s twenty consonants, eight of them, and the documented lifetimes and limits', () => {
    expect(USER_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ');
    expect(new Set(USER_CODE_ALPHABET).size).toBe(20);
    expect(USER_CODE_LENGTH).toBe(8);
    expect([DEVICE_CODE_TTL_SECONDS, POLL_INTERVAL_SECONDS, SLOW_DOWN_STEP_SECONDS]).toEqual([600, 5, 5]);
    expect([USER_CODE_ENTRIES_PER_ACCOUNT, USER_CODE_ENTRIES_PER_ADDRESS, USER_CODE_WINDOW_SECONDS]).toEqual([20, 60, 600]);
  });

  it('draws eight letters of the alphabet, every letter of it over many codes, and rarely the same code twice', () => {
    const codes = Array.from({ length: 500 }, () => newUserCode());

    for (const code of codes) expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    const letters = new Set(codes.join(''));
    expect([...letters].sort().join('')).toBe(USER_CODE_ALPHABET);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('formats a code as two groups of four', () => {
    expect(formatUserCode('BCDFGHJK')).toBe('BCDF-GHJK');
  });

  it.each([
    ['BCDFGHJK', 'BCDFGHJK'],
    ['BCDF-GHJK', 'BCDFGHJK'],
    ['bcdf-ghjk', 'BCDFGHJK'],
    ['bcdf ghjk', 'BCDFGHJK'],
    ['  b-c d-f\tg h-j k ', 'BCDFGHJK'],
    ['BCDF--GHJK', 'BCDFGHJK'],
    ['XZVW-TSRQ', 'XZVWTSRQ'],
    // 32 characters, the longest accepted.
    [`BCDF${' '.repeat(24)}GHJK`, 'BCDFGHJK'],
  ])('normalizes %j to %s', (typed, canonical) => {
    expect(normalizeUserCode(typed)).toBe(canonical);
  });

  it.each([
    ['undefined', undefined],
    ['empty', ''],
    ['a vowel', 'BCDF-GHJA'],
    ['a vowel first', 'ACDF-GHJK'],
    ['vowels and digits', 'AEIO-U123'],
    ['a digit', 'BCDF-GHJ2'],
    ['seven letters', 'BCDF-GHJ'],
    ['nine letters', 'BCDF-GHJKL'],
    ['another separator', 'BCDF_GHJK'],
    ['a dot', 'BCDF.GHJK'],
    ['over 32 characters', `BCDF${' '.repeat(25)}GHJK`],
    ['letters outside the alphabet (Y)', 'BCDF-GHJY'],
  ])('refuses %s', (_, typed) => {
    expect(normalizeUserCode(typed)).toBeUndefined();
  });
});

describe('device code items', () => {
  const item = (status: string) => ({ status }) as DeviceCodeItem;

  it.each(['device_pending', 'device_approved', 'device_denied'])('%s is a device authorization', (status) => {
    expect(isDeviceAuthorization(item(status))).toBe(true);
  });

  it.each(['active', 'revoked', 'pending', 'approved_device_'])('%s is not (the family its redemption made, or another item)', (status) => {
    expect(isDeviceAuthorization(item(status))).toBe(false);
  });
});

describe('device codes', () => {
  it('names a new family, in the shape that deviceCodeFamily reads back', () => {
    const { familyId, deviceCode } = newDeviceCode();

    expect(familyId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(deviceCode).toMatch(new RegExp(`^${familyId}\\.[0-9A-Za-z_-]{43}$`));
    expect(deviceCodeFamily(deviceCode)).toBe(familyId);
    expect(newDeviceCode().familyId).not.toBe(familyId);
  });

  const family = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const token = 'aZ09_-'.padEnd(43, 'x');

  it('reads the family of a well-formed code', () => {
    expect(deviceCodeFamily(`${family}.${token}`)).toBe(family);
  });

  it.each([
    ['an empty code', ''],
    ['a family alone', family],
    ['no token', `${family}.`],
    ['a short token', `${family}.${token.slice(1)}`],
    ['a long token', `${family}.${token}x`],
    ['a token with other characters', `${family}.${token.slice(1)}+`],
    ['an upper-case family', `${family.toUpperCase()}.${token}`],
    ['a family without dashes', `${family.replace(/-/g, '')}.${token}`],
    ['something before', `x${family}.${token}`],
    ['an authorization code (user id first)', `user.${family}.${token}`],
    ['a newline after', `${family}.${token}\n`],
    ['another separator', `${family}:${token}`],
  ])('refuses %s', (_, code) => {
    expect(deviceCodeFamily(code)).toBeUndefined();
  });
});
