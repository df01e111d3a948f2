import { describe, expect, it } from 'vitest';
import { sessionUserId } from '#shared/data/session-repo';

// Reading the user id a session cookie names (shared/data/session-repo.ts), before any read of
// the table; the sessions themselves are test/integration/session-repo.test.ts.

const TOKEN = 'A'.repeat(43);

describe('sessionUserId', () => {
  it('reads the user id of a cookie of our shape: an id of 1 to 64 letters, digits or dashes, a dot, 43 base64url characters', () => {
    expect(sessionUserId(`user-1.${TOKEN}`)).toBe('user-1');
    expect(sessionUserId(`${'a'.repeat(64)}.${'-_'.repeat(21)}z`)).toBe('a'.repeat(64));
  });

  it('reads nothing from any other value', () => {
    for (const cookie of [
      `.${TOKEN}`, `${'a'.repeat(65)}.${TOKEN}`, `user_1.${TOKEN}`, `user.1.${TOKEN}`, `user-1.${TOKEN.slice(1)}`, `user-1.${TOKEN}A`,
      `user-1.${TOKEN.slice(1)}=`, `user-1 .${TOKEN}`, ` user-1.${TOKEN}`, `user-1.${TOKEN}\n`, `user-1${TOKEN}`, '',
    ]) {
      expect(sessionUserId(cookie)).toBeUndefined();
    }
  });
});
