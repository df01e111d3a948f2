import { describe, expect, it } from 'vitest';
import { signupProblems } from '#shared/domain/signup';
import { clientTypeOf, isPublicClient, isRegisteredOrigin, previousSecretValidUntil, redirectOrigins, redirectUriProblem, registrationProblems, type Client, type ClientRegistration } from '#shared/domain/client';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_MIN_SCORE, passwordProblem, TOO_EASY } from '#shared/domain/password-policy';

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
  const ADA = { email: 'ada@example.com', names: ['Ada', 'Lovelace'] };

  it('accepts a passphrase', async () => {
    expect(await passwordProblem(GOOD_PASSPHRASE, ADA)).toBeUndefined();
  });

  it('refuses a password shorter than the minimum and accepts one of exactly the minimum', async () => {
    expect(PASSWORD_MIN_LENGTH).toBe(10);
    expect(await passwordProblem('k7#mQ2!vz')).toBe('Use at least 10 characters.');
    expect(await passwordProblem('k7#mQ2!vzX')).toBeUndefined();
    expect(await passwordProblem('')).toBe('Use at least 10 characters.');
  });

  it('refuses a password longer than the maximum and accepts one of exactly the maximum', async () => {
    expect(PASSWORD_MAX_LENGTH).toBe(128);
    const atMost = 'plum tree '.repeat(13).slice(0, 128);

    expect(await passwordProblem(atMost)).toBeUndefined();
    expect(await passwordProblem(`${atMost}x`)).toBe('Use at most 128 characters.');
  });

  it('counts code points, not UTF-16 units', async () => {
    // Five emoji are ten UTF-16 units but five characters: too short.
    expect(await passwordProblem('🔑🌳🚲🎻🍋')).toBe('Use at least 10 characters.');
    expect(await passwordProblem('🔑🌳🚲🎻🍋🔑🌳🚲🎻🍋')).toBeUndefined();
    // 128 emoji are 256 UTF-16 units but within the limit; 129 are not.
    const emoji = ['🔑', '🌳', '🚲', '🎻'];
    const many = (n: number) => Array.from({ length: n }, (_, i) => emoji[i % emoji.length]).join('');
    expect(await passwordProblem(many(128))).toBeUndefined();
    expect(await passwordProblem(many(129))).toBe('Use at most 128 characters.');
  });

  it('asks for a zxcvbn score of at least 3', () => {
    expect(PASSWORD_MIN_SCORE).toBe(3);
  });

  // Long enough for the length rule, and none in the old 50-entry list except password123 and qwertyuiop.
  it.each(['password123!', 'Password1234', 'qwertyuiop', 'QWERTYUIOP', 'qwerty123456', '1234567890', 'iloveyou123', 'Administrator', 'sunshine2024', 'monkey123456', 'lovelace2024'])(
    'refuses the guessable password %s, with zxcvbn\'s feedback',
    async (password) => {
      const problem = await passwordProblem(password);
      expect(problem).toMatch(new RegExp(`^${TOO_EASY.replace(/\./g, '\\.')} \\S`));
      expect(problem).toMatch(/common|guess|words|used/i);
      expect(problem).not.toContain(password);
    },
  );

  it('says why: a frequently used password, a keyboard row, repeated characters', async () => {
    expect(await passwordProblem('1234567890')).toContain('This is a frequently used password.');
    expect(await passwordProblem('aaaaaaaaaa')).toContain('Repeated characters like "aaa" are easy to guess.');
  });

  it.each(['aaaaaaaaaa', 'aAaAaAaAaA', '          ', '%%%%%%%%%%%%%%%%', '🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑'])('refuses one character or pattern repeated (%s)', async (password) => {
    expect(await passwordProblem(password)).toMatch(new RegExp(`^${TOO_EASY.replace(/\./g, '\\.')}`));
  });

  it('refuses a password built on the account\'s own names, which it accepts for another account', async () => {
    const tooEasy = new RegExp(`^${TOO_EASY.replace(/\./g, '\\.')} There should not be any personal or page related data\\.`);
    expect(await passwordProblem('Lovelace1815!', { email: 'countess@example.com', names: ['Ada', 'Lovelace'] })).toMatch(tooEasy);
    expect(await passwordProblem('Lovelace1815!', { email: 'countess@example.com', names: ['Zelda', 'Sayre'] })).toBeUndefined();
    expect(await passwordProblem('ixelmar1896!', { email: 'q@example.com', names: ['Quorvath', 'Ixelmar'] })).toMatch(tooEasy);
    expect(await passwordProblem('ixelmar1896!', { email: 'q@example.com', names: ['Zelda', 'Sayre'] })).toBeUndefined();
  });

  it.each(['correct horse battery staple', 'tide-pool saxophone marmalade', 'k7#mQ2!vzX', 'algebra of tides', 'a brand new password 9'])(
    'accepts the strong password %s',
    async (password) => {
      expect(await passwordProblem(password, ADA)).toBeUndefined();
    },
  );

  it('refuses a password containing the local part of the e-mail address, in any case', async () => {
    const problem = 'Do not use your e-mail address in your password.';

    expect(await passwordProblem('my name is ada.lovelace!', { email: 'Ada.Lovelace@example.com' })).toBe(problem);
    expect(await passwordProblem('ADA.LOVELACE forever', { email: 'ada.lovelace@example.com' })).toBe(problem);
    expect(await passwordProblem('ada.lovelace', { email: 'ada.lovelace@example.com' })).toBe(problem);
  });

  it('allows a very short local part inside the password (too common a substring to refuse)', async () => {
    expect(await passwordProblem('algebra of tides', { email: 'al@example.com' })).toBeUndefined();
    expect(await passwordProblem(GOOD_PASSPHRASE, {})).toBeUndefined();
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
    'ftp://localhost/callback',
    'ws://127.0.0.1/callback',
  ])('refuses a non-web scheme: %s', (uri) => {
    expect(redirectUriProblem(uri)).toBe('must use https (http is allowed only for localhost, 127.0.0.1 and [::1])');
  });

  it('refuses a URI longer than 500 characters, and takes one of exactly 500', () => {
    expect(redirectUriProblem(`https://chess-clock.example/${'a'.repeat(480)}`)).toBe('longer than 500 characters');
    const exactly = `https://chess-clock.example/${'a'.repeat(500 - 'https://chess-clock.example/'.length)}`;
    expect(exactly).toHaveLength(500);
    expect(redirectUriProblem(exactly)).toBeUndefined();
    expect(redirectUriProblem(`com.example.app:/${'a'.repeat(500 - 'com.example.app:/'.length)}`, 'public')).toBeUndefined();
  });
});

describe('redirectUriProblem of a native or browser application (public client, RFC 8252)', () => {
  it.each([
    'https://chess-clock.example/callback',
    'https://chess-clock.example:8443/spa/?tenant=1',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:3000/callback',
    'http://127.0.0.1:65535/callback?x=1',
    'http://127.0.0.1',
    'http://[::1]/callback',
    'http://[::1]:61001/oauth2redirect/example-provider',
    'com.example.chessclock:/callback',
    'com.example.chess-clock:/oauth2redirect/example-provider',
    'app.chess-clock.example.v2:/',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri, 'public')).toBeUndefined();
  });

  it.each(['http://localhost/callback', 'http://localhost:8080/callback'])('refuses localhost, which is not a loopback IP (RFC 8252 §8.3): %s', (uri) => {
    expect(redirectUriProblem(uri, 'public')).toBe('use http://127.0.0.1 or http://[::1] instead of localhost (RFC 8252 §8.3)');
  });

  it.each([
    'http://chess-clock.example/callback',
    'http://127.0.0.2/callback',
    'http://127.0.0.1.nip.io/callback',
    'http://[::2]/callback',
    'http://127.0.0.1:0/callback',
    'http://127.0.0.1:080/callback',
    'HTTP://127.0.0.1/callback',
  ])('refuses plain http off the loopback IP literals, or with a port that is no port: %s', (uri) => {
    expect(redirectUriProblem(uri, 'public')).toBe('must use https, http only on 127.0.0.1 or [::1], or a private-use scheme such as com.example.app:/callback');
  });

  it.each([
    'chessclock:/callback',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'Com.Example.App:/callback',
    'com..example:/callback',
    'com.example.:/callback',
    'ftp://chess-clock.example/callback',
  ])('refuses a scheme that is not a private-use scheme in reverse domain form: %s', (uri) => {
    expect(redirectUriProblem(uri, 'public')).toBe('must use https, http only on 127.0.0.1 or [::1], or a private-use scheme in reverse domain form such as com.example.app:/callback');
  });

  it.each(['com.example.app://callback', 'com.example.app:callback', 'com.example.app:', 'com.example.app:callback:/x'])('refuses a private-use URI without a single slash: %s', (uri) => {
    expect(redirectUriProblem(uri, 'public')).toBe('a private-use scheme takes a single slash and a path, as in com.example.app:/callback (RFC 8252 §7.1)');
  });

  it('refuses a fragment, credentials, a relative reference and a URI over 500 characters, as for a server application', () => {
    expect(redirectUriProblem('com.example.app:/callback#x', 'public')).toBe('must not contain a fragment (#)');
    expect(redirectUriProblem('http://127.0.0.1:3000/callback#', 'public')).toBe('must not contain a fragment (#)');
    expect(redirectUriProblem('http://user@127.0.0.1/callback', 'public')).toBe('must not contain credentials');
    for (const uri of ['/callback', 'http://127.0.0.1:65536/callback', '1com.example:/callback', 'com.exam_ple:/callback']) {
      expect(redirectUriProblem(uri, 'public'), uri).toBe('not an absolute URL');
    }
    expect(redirectUriProblem(`com.example.app:/${'a'.repeat(490)}`, 'public')).toBe('longer than 500 characters');
  });
});

describe('client types', () => {
  it('reads an application without a type as confidential (every one registered before public clients)', () => {
    expect(clientTypeOf({})).toBe('confidential');
    expect(clientTypeOf({ clientType: 'confidential' })).toBe('confidential');
    expect(clientTypeOf({ clientType: 'public' })).toBe('public');
    expect([isPublicClient({}), isPublicClient({ clientType: 'public' })]).toEqual([false, true]);
  });

  it('has no previous secret to accept when none was kept, even right after a rotation', () => {
    const rotatedNow = { secretCreatedAt: '2026-11-01T10:00:00.000', createdAt: '2026-10-01T00:00:00.000' };
    expect(previousSecretValidUntil({ ...rotatedNow, previousSecretHash: 'h' } as Client, new Date('2026-11-01T10:00:01.000Z'))).toEqual(expect.any(Date));
    expect(previousSecretValidUntil(rotatedNow as Client, new Date('2026-11-01T10:00:01.000Z'))).toBeUndefined();
  });

  it('gives the web origins of the redirect URIs, none for a private-use scheme', () => {
    expect(redirectOrigins({ redirectUris: ['https://App.Example/cb', 'http://127.0.0.1:5173/cb', 'http://[::1]/cb', 'https://app.example:443/x', 'com.example.app:/callback', 'not a url'] }))
      .toEqual(['https://app.example', 'http://127.0.0.1:5173', 'http://[::1]', 'https://app.example']);
  });
});

describe('isRegisteredOrigin', () => {
  it('is an origin of a registered redirect URI exactly, or for a public client a loopback origin of a registered loopback host with any port', () => {
    const uris = ['https://app.example/cb', 'http://[::1]/cb', 'http://127.0.0.1:5173/cb'];
    const publicApp = { clientType: 'public' as const, redirectUris: uris };
    const serverApp = { redirectUris: uris };

    for (const origin of ['https://app.example', 'http://[::1]', 'http://[::1]:8080', 'http://127.0.0.1:9', 'http://127.0.0.1']) {
      expect(isRegisteredOrigin(publicApp, origin), origin).toBe(true);
    }
    for (const origin of ['https://app.example:8443', 'http://[::1]:8080/', 'http://localhost:8080', 'http://127.0.0.1:9/cb', 'null']) {
      expect(isRegisteredOrigin(publicApp, origin), origin).toBe(false);
    }
    expect(isRegisteredOrigin(serverApp, 'http://127.0.0.1:5173')).toBe(true);
    expect(isRegisteredOrigin(serverApp, 'http://127.0.0.1:5174')).toBe(false);
    expect(isRegisteredOrigin(serverApp, 'http://[::1]:8080')).toBe(false);
    expect(isRegisteredOrigin({ clientType: 'public', redirectUris: ['https://app.example/cb'] }, 'http://127.0.0.1:5173')).toBe(false);
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
    expect(registrationProblems(makeRegistration({ redirectUris: [] }))).toEqual({
      redirectUris: 'Give 1 to 10 redirect URIs, one per line (none only for an application that uses the device flow alone).',
    });
    // An application that uses only the device flow redirects nowhere; it still has at most 10.
    expect(registrationProblems(makeRegistration({ redirectUris: [], deviceFlow: true }))).toEqual({});
    expect(registrationProblems(makeRegistration({ redirectUris: uris(11), deviceFlow: true }))).toEqual({ redirectUris: 'Give 1 to 10 redirect URIs, one per line.' });
    expect(registrationProblems(makeRegistration({ redirectUris: uris(11) }))).toEqual({ redirectUris: 'Give 1 to 10 redirect URIs, one per line.' });
  });

  it('holds the redirect URIs to the rules of the application\'s type', () => {
    const native = makeRegistration({ redirectUris: ['http://127.0.0.1/callback', 'com.example.chessclock:/callback'] });
    expect(registrationProblems(native, 'public')).toEqual({});
    expect(registrationProblems(native)).toEqual({
      redirectUris: 'com.example.chessclock:/callback: must use https (http is allowed only for localhost, 127.0.0.1 and [::1])',
    });
    expect(registrationProblems(makeRegistration({ redirectUris: ['http://localhost:8080/callback'] }), 'confidential')).toEqual({});
    expect(registrationProblems(makeRegistration({ redirectUris: ['http://localhost:8080/callback'] }), 'public')).toEqual({
      redirectUris: 'http://localhost:8080/callback: use http://127.0.0.1 or http://[::1] instead of localhost (RFC 8252 §8.3)',
    });
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
    expect(registrationProblems(makeRegistration({ description: 'd'.repeat(501) })).description).toBe('Keep the description under 500 characters.');
  });

  it.each(['', 'chess-clock.example', 'javascript:alert(1)', 'ftp://chess-clock.example', `https://chess-clock.example/${'w'.repeat(300)}`])(
    'refuses the website "%s" (it becomes a link on the consent page)',
    (website) => {
      expect(registrationProblems(makeRegistration({ website }))).toEqual({ website: 'Give the address of the application’s website (https://…).' });
    },
  );

  it('takes an http or https website of up to 300 characters', () => {
    const longest = `https://chess-clock.example/${'w'.repeat(300 - 'https://chess-clock.example/'.length)}`;
    for (const website of ['http://chess-clock.example', 'https://chess-clock.example', longest]) {
      expect(registrationProblems(makeRegistration({ website })), website).toEqual({});
    }
    expect(registrationProblems(makeRegistration({ website: `${longest}w` }))).toHaveProperty('website');
  });

  it('reports every wrong field at once', () => {
    const problems = registrationProblems({ name: '', description: '', website: 'nope', redirectUris: ['nope'] });

    expect(Object.keys(problems).sort()).toEqual(['name', 'redirectUris', 'website']);
    expect(problems.redirectUris).toBe('nope: not an absolute URL');
  });
});

describe('signupProblems', async () => {
  it('accepts a complete form, gender optional, address in any case and with spaces', async () => {
    expect(await signupProblems(makeSignup())).toEqual({});
    expect(await signupProblems(makeSignup({ gender: undefined }))).toEqual({});
    expect(await signupProblems(makeSignup({ email: '  Ada@Example.COM ' }))).toEqual({});
  });

  it('requires the first and last names, up to 100 characters', async () => {
    expect(await signupProblems(makeSignup({ firstname: undefined }))).toEqual({ firstname: 'Give your first name (up to 100 characters).' });
    expect(await signupProblems(makeSignup({ firstname: '   ' }))).toEqual({ firstname: 'Give your first name (up to 100 characters).' });
    expect(await signupProblems(makeSignup({ lastname: 'L'.repeat(100) }))).toEqual({});
    expect(await signupProblems(makeSignup({ lastname: 'L'.repeat(101) }))).toEqual({ lastname: 'Give your last name (up to 100 characters).' });
  });

  it.each(['', 'ada', 'ada@', '@example.com', 'ada@example', 'ada lovelace@example.com', `${'a'.repeat(250)}@example.com`])(
    'refuses the address "%s"',
    async (email) => {
      expect((await signupProblems(makeSignup({ email }))).email).toBe('Give a valid e-mail address.');
    },
  );

  it('applies the password policy, with the address given', async () => {
    expect(await signupProblems(makeSignup({ password: 'short' }))).toEqual({ password: 'Use at least 10 characters.' });
    expect(await signupProblems(makeSignup({ password: undefined }))).toEqual({ password: 'Use at least 10 characters.' });
    expect(await signupProblems(makeSignup({ email: 'lovelace@example.com', password: 'i am lovelace, hello' })))
      .toEqual({ password: 'Do not use your e-mail address in your password.' });
    expect((await signupProblems(makeSignup({ password: 'password123!' }))).password).toMatch(/^This password is too easy to guess\. /);
  });

  it('judges the password against the form\'s own names', async () => {
    const password = 'ixelmar1896!';
    expect(await signupProblems(makeSignup({ firstname: 'Zelda', lastname: 'Sayre', password }))).toEqual({});
    expect((await signupProblems(makeSignup({ firstname: 'Quorvath', lastname: 'Ixelmar', password }))).password).toMatch(/^This password is too easy to guess\. /);
  });

  it.each(['3', '-1', 'female', ''])('refuses the gender "%s"', async (gender) => {
    expect(await signupProblems(makeSignup({ gender }))).toEqual({ gender: 'Choose one of the options.' });
  });

  it('reports every wrong field at once', async () => {
    expect(Object.keys(await signupProblems({})).sort()).toEqual(['email', 'firstname', 'lastname', 'password']);
  });
});
