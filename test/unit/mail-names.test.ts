import { describe, expect, it } from 'vitest';
import { signupProblems } from '#shared/domain/signup';
import { MAX_NAME_LENGTH, normalizeName } from '#shared/domain/user';
import { greeting, nameForMail } from '#shared/email/mail-text';

/** A valid sign-up form with the given first name. */
const signup = (firstname: string) => ({ firstname, lastname: 'Lovelace', email: 'ada@example.com', password: 'correct horse battery staple', gender: '2' });

describe('normalizeName', () => {
  it('composes to NFC, trims and collapses every run of white space, line breaks included', () => {
    expect(normalizeName('  Ame\u0301lie \t\r\n  Marie\u2028Paule  ')).toBe('Amélie Marie Paule');
  });

  it('drops format characters (bidirectional overrides, zero-width characters); a control character (NUL, escape) is a space', () => {
    expect(normalizeName('A\u202Eda\u202C\u200B\u2066 \u0000Lo\u001B[31mve')).toBe('Ada Lo [31mve');
  });

  it('keeps letters of every script, apostrophes and hyphens', () => {
    expect(normalizeName('Zoë O’Brien-Łukasiewicz 李')).toBe('Zoë O’Brien-Łukasiewicz 李');
  });
});

describe('signupProblems for names', () => {
  it.each([['only spaces', '   '], ['only invisible characters', '\u200B\u202E\u2066'], ['only line breaks', '\r\n\r\n']])(
    'refuses a first name of %s with the field\'s message',
    async (_, firstname) => {
      expect(await signupProblems(signup(firstname))).toEqual({ firstname: `Give your first name (up to ${MAX_NAME_LENGTH} characters).` });
    },
  );

  it('measures the length after normalization, in characters', async () => {
    expect(await signupProblems(signup(`  ${'é'.repeat(MAX_NAME_LENGTH)}\u200B  `))).toEqual({});
    expect(await signupProblems(signup('e\u0301'.repeat(MAX_NAME_LENGTH)))).toEqual({});
    expect(await signupProblems(signup('é'.repeat(MAX_NAME_LENGTH + 1)))).toHaveProperty('firstname');
  });
});

describe('nameForMail', () => {
  it.each([
    ['a URL', 'Bob https://evil.example/login', 'Bob https evil. example login'],
    ['a bare domain', 'www.evil.example', 'www. evil. example'],
    ['an address', 'bob@evil.example', 'bob evil. example'],
    ['a header on a new line', 'Bob\r\nBcc: victim@example.com', 'Bob Bcc victim example. com'],
    ['markup', '<a href="x">Bob</a>', 'a href x Bob a'],
  ])('breaks up %s so it cannot become a link or a header', (_, name, shown) => {
    expect(nameForMail(name)).toBe(shown);
    expect(nameForMail(name)).not.toMatch(/[:/@<>\r\n]|\.\S/);
  });

  it('leaves ordinary names as they are, initials followed by a space', () => {
    expect(nameForMail('Zoë O’Brien-Łukasiewicz')).toBe('Zoë O’Brien-Łukasiewicz');
    expect(nameForMail('J.R.R.')).toBe('J. R. R.');
  });

  it('cuts a long name at 40 characters', () => {
    expect([...nameForMail('Å'.repeat(100))]).toHaveLength(40);
  });
});

describe('greeting', () => {
  it('greets by name, or without one when nothing of it is left', () => {
    expect(greeting('Ada')).toBe('Hello Ada,');
    expect(greeting('://@')).toBe('Hello,');
  });
});
