import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '#shared/accounts/password';

const PASSWORD = 'correct horse battery staple';

describe('password hashing', () => {
  it('stores scrypt with N=2^15, r=8, p=1, a 16-byte salt and a 32-byte key (OWASP floor)', async () => {
    const [scheme, n, r, p, salt, key] = (await hashPassword(PASSWORD)).split('$');

    expect([scheme, n, r, p]).toEqual(['scrypt', '32768', '8', '1']);
    expect(Buffer.from(salt!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64url')).toHaveLength(32);
  });

  it('salts every hash: the same password twice gives two different hashes, both of which verify', async () => {
    const [first, second] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);

    expect(first).not.toBe(second);
    expect(await verifyPassword(PASSWORD, first)).toBe(true);
    expect(await verifyPassword(PASSWORD, second)).toBe(true);
  });

  it('refuses a password differing only in its last character, its case, or a trailing space', async () => {
    const stored = await hashPassword(PASSWORD);
    for (const attempt of [`${PASSWORD.slice(0, -1)}f`, PASSWORD.toUpperCase(), `${PASSWORD} `, '']) {
      expect(await verifyPassword(attempt, stored)).toBe(false);
    }
  });

  it('accepts the same password typed in another Unicode form (NFKC)', async () => {
    const stored = await hashPassword('café ﬁ');
    expect(await verifyPassword('cafe\u0301 fi', stored)).toBe(true);
  });

  it('verifies with the parameters stored in the hash, so hashes made with other costs keep working', async () => {
    const salt = randomBytes(16);
    const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const stored = ['scrypt', 2 ** 14, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');

    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword('wrong', stored)).toBe(false);
  });

  it('refuses against a stored value that is not a whole scrypt hash, or a key of another length', async () => {
    const stored = await hashPassword(PASSWORD);
    const parts = stored.split('$');
    const shortKey = [...parts.slice(0, 5), Buffer.from(parts[5]!, 'base64url').subarray(0, 16).toString('base64url')].join('$');
    for (const bad of [`bcrypt${stored.slice('scrypt'.length)}`, parts.slice(0, 5).join('$'), `${parts.slice(0, 4).join('$')}$$${parts[5]}`, '', shortKey]) {
      expect(await verifyPassword(PASSWORD, bad)).toBe(false);
    }
  });
});
