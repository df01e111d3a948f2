import { describe, expect, it } from 'vitest';
import { signupProblems } from '#shared/domain/signup';
import { redirectUriProblem, registrationProblems, type ClientRegistration } from '#shared/domain/client';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from '#shared/domain/password-policy';

const GOOD_PASSPHRASE = 'correct horse battery staple';

/** A valid registration; any field can be overridden. */
function makeRegistration(overrides: Partial<ClientRegistration> = {}): ClientRegistration {
  return {
    name: 'Chess Clock',
    description: 'Shows which of your devices are away.',
    website: 'https://chess-clock.example',
    redirectUris: ['https://chess-clock.example/callback'],
    ...overrides,
  };
}

/** A valid sign-up form; any field can be overridden, or removed with undefined. */
function makeSignup(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const form: Record<string, string | undefined> = {
    firstname: 'Ada', lastname: 'Lovelace', email: 'ada@example.com', password: GOOD_PASSPHRASE, gender: '2', ...overrides,
  };
  return Object.fromEntries(Object.entries(form).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

describe('passwordProblem', () => {
  it('accepts a passphrase', () => {
    expect(passwordProblem(GOOD_PASSPHRASE, 'ada@example.com')).toBeUndefined();
  });

  it('refuses a password shorter than the minimum and accepts one of exactly the minimum', () => {
    expect(PASSWORD_MIN_LENGTH).toBe(10);
    expect(passwordProblem('k7#mQ2!vz')).toBe('Use at least 10 characters.');
    expect(passwordProblem('k7#mQ2!vzX')).toBeUndefined();
    expect(passwordProblem('')).toBe('Use at least 10 characters.');
  });

  it('refuses a password longer than the maximum and accepts one of exactly the maximum', () => {
    expect(PASSWORD_MAX_LENGTH).toBe(128);
    const atMost = 'plum tree '.repeat(13).slice(0, 128);

    expect(passwordProblem(atMost)).toBeUndefined();
    expect(passwordProblem(`${atMost}x`)).toBe('Use at most 128 characters.');
  });

  it('counts code points, not UTF-16 units', () => {
    // Five emoji are ten UTF-16 units but five characters: too short.
    expect(passwordProblem('🔑🌳🚲🎻🍋')).toBe('Use at least 10 characters.');
    expect(passwordProblem('🔑🌳🚲🎻🍋🔑🌳🚲🎻🍋')).toBeUndefined();
    // 128 emoji are 256 UTF-16 units but within the limit; 129 are not.
    const emoji = ['🔑', '🌳', '🚲', '🎻'];
    const many = (n: number) => Array.from({ length: n }, (_, i) => emoji[i % emoji.length]).join('');
    expect(passwordProblem(many(128))).toBeUndefined();
    expect(passwordProblem(many(129))).toBe('Use at most 128 characters.');
  });

  it.each(['password123', 'PASSWORD123', 'qwertyuiop', '1234567890', 'iloveyou123', 'Administrator'])(
    'refuses the common password %s, whatever its case',
    (password) => {
      expect(passwordProblem(password)).toBe('This password is too common. Choose another one.');
    },
  );

  it.each(['aaaaaaaaaa', 'aAaAaAaAaA', '          ', '%%%%%%%%%%%%%%%%', '🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑'])('refuses one character repeated (%s)', (password) => {
    expect(passwordProblem(password)).toBe('This password is too common. Choose another one.');
  });

  it('refuses a password containing the local part of the e-mail address, in any case', () => {
    const problem = 'Do not use your e-mail address in your password.';

    expect(passwordProblem('my name is ada.lovelace!', 'Ada.Lovelace@example.com')).toBe(problem);
    expect(passwordProblem('ADA.LOVELACE forever', 'ada.lovelace@example.com')).toBe(problem);
    expect(passwordProblem('ada.lovelace', 'ada.lovelace@example.com')).toBe(problem);
  });

  it('allows a very short local part inside the password (too common a substring to refuse)', () => {
    expect(passwordProblem('algebra of tides', 'al@example.com')).toBeUndefined();
    expect(passwordProblem(GOOD_PASSPHRASE, '')).toBeUndefined();
  });
});

describe('redirectUriProblem', () => {
  it.each([
    'https://chess-clock.example/callback',
    'https://chess-clock.example:8443/oauth/callback?tenant=1',
    'http://localhost/callback',
    'http://localhost:8080/callback',
    'http://127.0.0.1:3000/callback',
    'http://[::1]:3000/callback',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    'http://chess-clock.example/callback',
    'http://192.168.1.20/callback',
    'http://localhost.chess-clock.example/callback',
    'http://127.0.0.1.nip.io/callback',
    'ftp://chess-clock.example/callback',
  ])('refuses plain http (or another transport) off loopback: %s', (uri) => {
    expect(redirectUriProblem(uri)).toBe('must use https (http is allowed only for localhost, 127.0.0.1 and [::1])');
  });

  it.each([
    'https://chess-clock.example/callback#done',
    'https://chess-clock.example/callback#',
    'http://localhost:8080/callback#x',
  ])('refuses a fragment: %s', (uri) => {
    expect(redirectUriProblem(uri)).toBe('must not contain a fragment (#)');
  });

  it.each(['https://user:secret@chess-clock.example/callback', 'https://user@chess-clock.example/callback'])(
    'refuses credentials: %s',
    (uri) => {
      expect(redirectUriProblem(uri)).toBe('must not contain credentials');
    },
  );

  it.each(['/callback', 'callback', 'chess-clock.example/callback', '//chess-clock.example/callback', ''])(
    'refuses a relative reference: "%s"',
    (uri) => {
      expect(redirectUriProblem(uri)).toBe('not an absolute URL');
    },
  );

  it.each([
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'com.example.chessclock:/callback',
    'chessclock://callback',
    'file:///etc/passwd',
  ])('refuses a non-web scheme: %s', (uri) => {
    expect(redirectUriProblem(uri)).toBe('must use https (http is allowed only for localhost, 127.0.0.1 and [::1])');
  });

  it('refuses a URI longer than 500 characters', () => {
    expect(redirectUriProblem(`https://chess-clock.example/${'a'.repeat(480)}`)).toBe('longer than 500 characters');
  });
});

describe('registrationProblems', () => {
  it('accepts a valid registration', () => {
    expect(registrationProblems(makeRegistration())).toEqual({});
  });

  it('accepts 1 to 10 redirect URIs', () => {
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://chess-clock.example/cb/${i}`);

    expect(registrationProblems(makeRegistration({ redirectUris: uris(1) }))).toEqual({});
    expect(registrationProblems(makeRegistration({ redirectUris: uris(10) }))).toEqual({});
    expect(registrationProblems(makeRegistration({ redirectUris: [] }))).toEqual({ redirectUris: 'Give 1 to 10 redirect URIs, one per line.' });
    expect(registrationProblems(makeRegistration({ redirectUris: uris(11) }))).toEqual({ redirectUris: 'Give 1 to 10 redirect URIs, one per line.' });
  });

  it('names the first refused redirect URI and why', () => {
    const problems = registrationProblems(makeRegistration({
      redirectUris: ['https://chess-clock.example/callback', 'http://chess-clock.example/callback', 'https://x.example/#a'],
    }));

    expect(problems).toEqual({
      redirectUris: 'http://chess-clock.example/callback: must use https (http is allowed only for localhost, 127.0.0.1 and [::1])',
    });
  });

  it('requires a name of 1 to 80 characters', () => {
    expect(registrationProblems(makeRegistration({ name: '' })).name).toBe('Give a name of 1 to 80 characters.');
    expect(registrationProblems(makeRegistration({ name: '   ' })).name).toBe('Give a name of 1 to 80 characters.');
    expect(registrationProblems(makeRegistration({ name: 'n'.repeat(80) }))).toEqual({});
    expect(registrationProblems(makeRegistration({ name: 'n'.repeat(81) })).name).toBe('Give a name of 1 to 80 characters.');
  });

  it('keeps the description under 500 characters (it is optional)', () => {
    expect(registrationProblems(makeRegistration({ description: '' }))).toEqual({});
    expect(registrationProblems(makeRegistration({ description: 'd'.repeat(500) }))).toEqual({});
    expect(registrationProblems(makeRegistration({ description: 'd'.repeat(501) })).description).toBeDefined();
  });

  it.each(['', 'chess-clock.example', 'javascript:alert(1)', 'ftp://chess-clock.example', `https://chess-clock.example/${'w'.repeat(300)}`])(
    'refuses the website "%s" (it becomes a link on the consent page)',
    (website) => {
      expect(Object.keys(registrationProblems(makeRegistration({ website })))).toEqual(['website']);
    },
  );

  it('reports every wrong field at once', () => {
    const problems = registrationProblems({ name: '', description: '', website: 'nope', redirectUris: ['nope'] });

    expect(Object.keys(problems).sort()).toEqual(['name', 'redirectUris', 'website']);
    expect(problems.redirectUris).toBe('nope: not an absolute URL');
  });
});

describe('signupProblems', () => {
  it('accepts a complete form, gender optional, address in any case and with spaces', () => {
    expect(signupProblems(makeSignup())).toEqual({});
    expect(signupProblems(makeSignup({ gender: undefined }))).toEqual({});
    expect(signupProblems(makeSignup({ email: '  Ada@Example.COM ' }))).toEqual({});
  });

  it('requires the first and last names, up to 100 characters', () => {
    expect(signupProblems(makeSignup({ firstname: undefined }))).toEqual({ firstname: 'Give your first name (up to 100 characters).' });
    expect(signupProblems(makeSignup({ firstname: '   ' }))).toEqual({ firstname: 'Give your first name (up to 100 characters).' });
    expect(signupProblems(makeSignup({ lastname: 'L'.repeat(100) }))).toEqual({});
    expect(signupProblems(makeSignup({ lastname: 'L'.repeat(101) }))).toEqual({ lastname: 'Give your last name (up to 100 characters).' });
  });

  it.each(['', 'ada', 'ada@', '@example.com', 'ada@example', 'ada lovelace@example.com', `${'a'.repeat(250)}@example.com`])(
    'refuses the address "%s"',
    (email) => {
      expect(signupProblems(makeSignup({ email })).email).toBe('Give a valid e-mail address.');
    },
  );

  it('applies the password policy, with the address given', () => {
    expect(signupProblems(makeSignup({ password: 'short' }))).toEqual({ password: 'Use at least 10 characters.' });
    expect(signupProblems(makeSignup({ password: undefined }))).toEqual({ password: 'Use at least 10 characters.' });
    expect(signupProblems(makeSignup({ email: 'lovelace@example.com', password: 'i am lovelace, hello' })))
      .toEqual({ password: 'Do not use your e-mail address in your password.' });
  });

  it.each(['3', '-1', 'female', ''])('refuses the gender "%s"', (gender) => {
    expect(signupProblems(makeSignup({ gender }))).toEqual({ gender: 'Choose one of the options.' });
  });

  it('reports every wrong field at once', () => {
    expect(Object.keys(signupProblems({})).sort()).toEqual(['email', 'firstname', 'lastname', 'password']);
  });
});
