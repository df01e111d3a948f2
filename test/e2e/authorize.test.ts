import { createHash, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { SCOPES } from '#shared/domain/scopes';
import { type Account, ALICE, authorizationParams, authorize, authorizePath, Browser, CODE_SHAPE, createAccount, formFields, nextLoopbackAddress, type Reply, signIn, textOf } from '../support/oauth-client';
import { OFF_SITE_RETURN_TOS } from '../support/return-to-attacks';
import { useTestService } from '../support/service';

const REDIRECT_URI = DEMO_CLIENT.redirectUris[0];

/** The error message a page shows. */
const alertOf = (reply: Reply) => textOf(/<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(reply.text)?.[1] ?? '');

/** The scope descriptions of a consent page: those asked for now, and those already granted. */
function scopeListsOf(reply: Reply): { asked: string[]; alreadyGranted: string[] } {
  const lists = [...reply.text.matchAll(/<ul class="scopes">([\s\S]*?)<\/ul>/g)].map(([, items]) =>
    [...(items ?? '').matchAll(/<li>([\s\S]*?)<\/li>/g)].map(([, item]) => textOf(item ?? '')));
  return { asked: lists[0] ?? [], alreadyGranted: lists[1] ?? [] };
}

function expectSecurityHeaders(reply: Reply) {
  expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(reply.headers.get('x-frame-options')).toBe('DENY');
  expect(reply.headers.get('referrer-policy')).toBe('no-referrer');
}

function expectErrorPage(reply: Reply, status = 400) {
  expect(reply.status).toBe(status);
  expect(reply.location).toBeNull();
  expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
  expect(alertOf(reply)).not.toBe('');
}

describe('authorization endpoint', () => {
  const service = useTestService();

  const browser = (options: { sourceAddress?: string } = {}) => new Browser(service.authUrl, options);

  /** A browser signed in as a new account of its own. */
  async function signedIn(): Promise<{ browser: Browser; account: Account }> {
    const account = await createAccount(service);
    const b = browser();
    const reply = await signIn(b, account);
    expect(reply.status).toBe(303);
    return { browser: b, account };
  }

  /** Asserts a redirect back to the client carrying an error, the state and the issuer, and no code. */
  function expectErrorRedirect(reply: Reply, error: string, state: string | undefined, status = 302) {
    expect(reply.status).toBe(status);
    const location = new URL(reply.location ?? 'about:blank');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('state')).toBe(state ?? null);
    expect(location.searchParams.get('iss')).toBe(service.authUrl);
    expect(location.searchParams.has('code')).toBe(false);
  }

  describe('refuses without redirecting', () => {
    it.each([
      ['an unknown client_id', { client_id: 'no-such-client' }],
      ['no client_id', { client_id: undefined }],
    ])('%s: a 400 error page', async (_, overrides) => {
      // Act
      const reply = await browser().get(authorizePath(authorizationParams(overrides)));

      // Assess
      expectErrorPage(reply);
      expect(alertOf(reply)).toMatch(/not registered/);
    });

    it.each([
      ['another path', 'http://localhost:8080/other'],
      ['an added query', `${REDIRECT_URI}?next=/admin`],
      ['a trailing slash', `${REDIRECT_URI}/`],
      ['a fragment', `${REDIRECT_URI}#top`],
      ['the host in capitals', 'http://LOCALHOST:8080/callback'],
      ['the scheme in capitals', 'HTTP://localhost:8080/callback'],
      ['the path in capitals', 'http://localhost:8080/Callback'],
      ['https instead of http', 'https://localhost:8080/callback'],
      ['another port', 'http://localhost:8081/callback'],
      ['the loopback address instead of the name', 'http://127.0.0.1:8080/callback'],
      ['another host with the registered one as prefix', 'http://localhost:8080.evil.example/callback'],
      ['no redirect_uri', undefined],
    ])('a redirect_uri that is not exactly the registered one (%s): a 400 error page', async (_, redirectUri) => {
      // Act
      const reply = await browser().get(authorizePath(authorizationParams({ redirect_uri: redirectUri })));

      // Assess
      expectErrorPage(reply);
      expect(alertOf(reply)).toMatch(/redirect address/);
    });

    it.each(['client_id', 'redirect_uri'])('a repeated %s, even with the same value twice: a 400 error page', async (name) => {
      // Prepare
      const params = authorizationParams();

      // Act
      const reply = await browser().get(`${authorizePath(params)}&${new URLSearchParams({ [name]: params[name]! })}`);

      // Assess
      expectErrorPage(reply);
    });

    it('an unregistered redirect_uri even for a signed-in user who already consented', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();
      await authorize(b, authorizationParams(), { account });

      // Act
      const reply = await b.get(authorizePath(authorizationParams({ redirect_uri: 'http://localhost:8080/other' })));

      // Assess
      expectErrorPage(reply);
    });
  });

  describe('redirects back with an error, the state and the issuer', () => {
    it('invalid_request for a missing or empty response_type', async () => {
      for (const responseType of [undefined, '']) {
        // Prepare
        const params = authorizationParams({ response_type: responseType });

        // Act
        const reply = await browser().get(authorizePath(params));

        // Assess
        expectErrorRedirect(reply, 'invalid_request', params.state);
      }
    });

    it.each([
      ['token', 'token'],
      ['"code id_token"', 'code id_token'],
    ])('unsupported_response_type for response_type %s', async (_, responseType) => {
      // Prepare
      const params = authorizationParams({ response_type: responseType });

      // Act
      const reply = await browser().get(authorizePath(params));

      // Assess
      expectErrorRedirect(reply, 'unsupported_response_type', params.state);
    });

    it.each([
      ['without PKCE', {}],
      ['with an empty state, without PKCE', { state: '' }],
      ['with an invalid PKCE challenge', { code_challenge: 'too-short', code_challenge_method: 'S256' }],
      ['with code_challenge_method plain', { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' }],
    ])('invalid_request without a state %s', async (_, extra) => {
      // Act
      const reply = await browser().get(authorizePath(authorizationParams({ state: undefined, ...extra })));

      // Assess
      expectErrorRedirect(reply, 'invalid_request', undefined);
    });

    it.each([
      ['no scope', undefined],
      ['an empty scope', ''],
      ['an unknown scope', 'admin'],
      ['a known and an unknown scope', 'read_device admin'],
      ['a scope in the wrong case', 'READ_DEVICE'],
    ])('invalid_scope for %s', async (_, scope) => {
      // Prepare
      const params = authorizationParams({ scope });

      // Act
      const reply = await browser().get(authorizePath(params));

      // Assess
      expectErrorRedirect(reply, 'invalid_scope', params.state);
    });

    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    it.each([
      ['code_challenge_method plain', { code_challenge: challenge, code_challenge_method: 'plain' }],
      ['a challenge without code_challenge_method', { code_challenge: challenge }],
      ['code_challenge_method s256 in lower case', { code_challenge: challenge, code_challenge_method: 's256' }],
      ['S256 without a challenge', { code_challenge_method: 'S256' }],
      ['a challenge that is too short', { code_challenge: challenge.slice(1), code_challenge_method: 'S256' }],
      ['a challenge with characters outside base64url', { code_challenge: `${challenge.slice(1)}+`, code_challenge_method: 'S256' }],
      ['a hexadecimal challenge', { code_challenge: 'a'.repeat(64), code_challenge_method: 'S256' }],
    ])('invalid_request for %s', async (_, pkce) => {
      // Prepare
      const params = authorizationParams(pkce);

      // Act
      const reply = await browser().get(authorizePath(params));

      // Assess
      expectErrorRedirect(reply, 'invalid_request', params.state);
    });

    // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
    it.each([
      ['code_challenge= alone', { code_challenge: '' }],
      ['code_challenge_method= alone', { code_challenge_method: '' }],
      ['both PKCE parameters empty', { code_challenge: '', code_challenge_method: '' }],
    ])('treats %s as no PKCE: the request goes on to the login', async (_, pkce) => {
      // Act
      const reply = await browser().get(authorizePath(authorizationParams(pkce)));

      // Assess
      expect(reply.status).toBe(302);
      expect(reply.location).toMatch(/^\/login\?return_to=/);
    });

    it.each([
      ['a challenge with code_challenge_method=', { code_challenge: challenge, code_challenge_method: '' }],
      ['S256 with code_challenge=', { code_challenge: '', code_challenge_method: 'S256' }],
    ])('invalid_request for %s (one PKCE parameter without the other)', async (_, pkce) => {
      // Prepare
      const params = authorizationParams(pkce);

      // Act
      const reply = await browser().get(authorizePath(params));

      // Assess
      expectErrorRedirect(reply, 'invalid_request', params.state);
    });

    it.each(['scope', 'response_type', 'code_challenge', 'code_challenge_method'])('invalid_request for a repeated %s', async (name) => {
      // Prepare
      const params = authorizationParams({ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });

      // Act
      const reply = await browser().get(`${authorizePath(params)}&${new URLSearchParams({ [name]: params[name]! })}`);

      // Assess
      expectErrorRedirect(reply, 'invalid_request', params.state);
    });

    it('invalid_request for a repeated state, without echoing the joined value', async () => {
      // Prepare
      const params = authorizationParams();

      // Act
      const reply = await browser().get(`${authorizePath(params)}&state=second`);

      // Assess
      expectErrorRedirect(reply, 'invalid_request', undefined);
    });

    it('ignores a repeated parameter it does not know', async () => {
      // Act
      const reply = await browser().get(`${authorizePath(authorizationParams())}&prompt=login&prompt=consent`);

      // Assess
      expect(reply.status).toBe(302);
      expect(reply.location).toMatch(/^\/login\?return_to=/);
    });

    it('returns the state unchanged, whatever characters it holds', async () => {
      // Prepare
      const params = authorizationParams({ state: 'a b&c=d/é?#%20', scope: 'admin' });

      // Act
      const reply = await browser().get(authorizePath(params));

      // Assess
      expectErrorRedirect(reply, 'invalid_scope', 'a b&c=d/é?#%20');
    });
  });

  describe('without state, when PKCE (S256) is used (RFC 9700 §2.1: PKCE is the CSRF defence)', () => {
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');

    it.each([
      ['omitted', undefined],
      ['empty', ''],
    ])('with state %s: consent, then a code and the issuer, and no state in the redirect', async (_, state) => {
      // Prepare
      const { browser: b, account } = await signedIn();
      const params = authorizationParams({ state, code_challenge: challenge, code_challenge_method: 'S256' });

      // Act
      const callback = await authorize(b, params, { account });

      // Assess
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('code')).toMatch(CODE_SHAPE);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
      expect(callback.searchParams.has('state')).toBe(false);
    });

    it('redirects an error back without a state too', async () => {
      // Act
      const reply = await browser().get(authorizePath(authorizationParams({
        state: undefined, code_challenge: challenge, code_challenge_method: 'S256', scope: 'admin',
      })));

      // Assess
      expectErrorRedirect(reply, 'invalid_scope', undefined);
    });

    it('the user denying answers access_denied without a state', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();

      // Act
      const callback = await authorize(b, authorizationParams({ state: undefined, code_challenge: challenge, code_challenge_method: 'S256' }), {
        account, decision: 'deny',
      });

      // Assess
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.has('state')).toBe(false);
    });
  });

  describe('login and consent', () => {
    it('sends a browser without a session to the login page and brings it back afterwards', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = browser();
      const path = authorizePath(authorizationParams());

      // Act
      const first = await b.get(path);
      const returnTo = new URL(first.location ?? '', service.authUrl).searchParams.get('return_to');
      const login = await signIn(b, account, returnTo ?? '');
      const back = await b.get(login.location ?? '');

      // Assess
      expect(first.status).toBe(302);
      expect(first.location).toMatch(/^\/login\?return_to=/);
      expect(returnTo).toBe(path);
      expect(login.status).toBe(303);
      expect(login.location).toBe(path);
      expect(back.status).toBe(200);
      expect(back.headers.get('content-type')).toMatch(/^text\/html/);
      expect(formFields(back.text, '/oauth/authorize')).toMatchObject({ client_id: DEMO_CLIENT.clientId, redirect_uri: REDIRECT_URI });
    });

    it('sets the session cookie HttpOnly and SameSite=Lax', async () => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const login = await signIn(browser(), account);

      // Assess
      const session = login.setCookies.find((cookie) => cookie.startsWith('session='));
      expect(session).toBeDefined();
      const attributes = session!.split(';').map((a) => a.trim().toLowerCase());
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('samesite=lax');
      expect(attributes).toContain('path=/');
    });

    it("shows the application's name, website and developer, and the scopes in words", async () => {
      // Prepare
      const b = browser();
      expect((await signIn(b, ALICE)).status).toBe(303);

      // Act
      const consent = await b.get(authorizePath(authorizationParams({ scope: 'read_user read_device write_device' })));

      // Assess
      expect(consent.status).toBe(200);
      const text = textOf(consent.text);
      expect(text).toContain(DEMO_CLIENT.name);
      expect(text).toContain(DEMO_CLIENT.website);
      expect(text).toContain('Alice Martin');
      expect(consent.text).toContain(`href="${DEMO_CLIENT.website}"`);
      expect(scopeListsOf(consent)).toEqual({ asked: [SCOPES.read_user, SCOPES.read_device, SCOPES.write_device], alreadyGranted: [] });
      expect(text).toContain(ALICE.user.email);
    });

    it('answers deny with a 303 to the redirect_uri carrying access_denied, the state and the issuer', async () => {
      // Prepare
      const { browser: b } = await signedIn();
      const params = authorizationParams();
      const consent = await b.get(authorizePath(params));

      // Act
      const reply = await b.postForm('/oauth/authorize', { ...formFields(consent.text, '/oauth/authorize'), decision: 'deny' });

      // Assess
      expectErrorRedirect(reply, 'access_denied', params.state, 303);
    });

    it('answers allow with a 303 to the redirect_uri carrying a code, the state and the issuer', async () => {
      // Prepare
      const { browser: b } = await signedIn();
      const params = authorizationParams();
      const consent = await b.get(authorizePath(params));

      // Act
      const reply = await b.postForm('/oauth/authorize', { ...formFields(consent.text, '/oauth/authorize'), decision: 'allow' });

      // Assess
      expect(reply.status).toBe(303);
      const location = new URL(reply.location ?? 'about:blank');
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get('code')).toMatch(CODE_SHAPE);
      expect(location.searchParams.get('state')).toBe(params.state);
      expect(location.searchParams.get('iss')).toBe(service.authUrl);
      expect(location.searchParams.has('error')).toBe(false);
    });

    it('skips the consent page when the scopes were already granted: a 302 with a new code', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();
      const first = await authorize(b, authorizationParams({ scope: 'read_device write_device' }), { account });
      const params = authorizationParams({ scope: 'write_device read_device' });

      // Act
      const reply = await b.get(authorizePath(params));

      // Assess
      expect(reply.status).toBe(302);
      const location = new URL(reply.location ?? 'about:blank');
      expect(location.searchParams.get('code')).toMatch(CODE_SHAPE);
      expect(location.searchParams.get('code')).not.toBe(first.searchParams.get('code'));
      expect(location.searchParams.get('state')).toBe(params.state);
      expect(location.searchParams.get('iss')).toBe(service.authUrl);
      const subset = await b.get(authorizePath(authorizationParams({ scope: 'read_device' })));
      expect(subset.status).toBe(302);
      expect(new URL(subset.location ?? 'about:blank').searchParams.has('code')).toBe(true);
    });

    it('asks again for a scope not yet granted, listing only that one as new', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();
      await authorize(b, authorizationParams({ scope: 'read_device' }), { account });

      // Act
      const consent = await b.get(authorizePath(authorizationParams({ scope: 'read_device write_device' })));

      // Assess
      expect(consent.status).toBe(200);
      expect(scopeListsOf(consent)).toEqual({ asked: [SCOPES.write_device], alreadyGranted: [SCOPES.read_device] });
    });

    it('remembers the union of what was granted', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();
      await authorize(b, authorizationParams({ scope: 'read_device' }), { account });
      await authorize(b, authorizationParams({ scope: 'read_user' }), { account });

      // Act
      const reply = await b.get(authorizePath(authorizationParams({ scope: 'read_user read_device' })));

      // Assess
      expect(reply.status).toBe(302);
      expect(new URL(reply.location ?? 'about:blank').searchParams.has('code')).toBe(true);
    });

    it('does not remember a denial as consent', async () => {
      // Prepare
      const { browser: b, account } = await signedIn();
      await authorize(b, authorizationParams(), { account, decision: 'deny' });

      // Act
      const reply = await b.get(authorizePath(authorizationParams()));

      // Assess
      expect(reply.status).toBe(200);
    });

    it.each([
      ['a wrong csrf field', (fields: Record<string, string>) => ({ ...fields, csrf: `${fields.csrf}x` })],
      ['no csrf field', ({ csrf: _, ...fields }: Record<string, string>) => fields],
    ])('refuses a consent POST with %s: 403, no code, nothing remembered', async (_, tamper) => {
      // Prepare
      const { browser: b } = await signedIn();
      const path = authorizePath(authorizationParams());
      const consent = await b.get(path);
      const fields = { ...formFields(consent.text, '/oauth/authorize'), decision: 'allow' };

      // Act
      const reply = await b.postForm('/oauth/authorize', tamper(fields));

      // Assess
      expectErrorPage(reply, 403);
      expect((await b.get(path)).status).toBe(200);
    });

    it('refuses a consent POST whose CSRF field is not its session’s (a cross-site form can bring only a double-submit pair of its own)', async () => {
      // Prepare: the browser's double-submit value, as a form that could set the cookie would send it, in the field and in the cookie.
      const { browser: b } = await signedIn();
      const consent = await b.get(authorizePath(authorizationParams()));
      const fields: Record<string, string> = { ...formFields(consent.text, '/oauth/authorize'), decision: 'allow' };
      const session = b.jar.get('session') ?? '';
      const doubleSubmit = b.jar.get('csrf')!;
      expect(fields.csrf).not.toBe(doubleSubmit);

      // Act
      const reply = await b.postForm('/oauth/authorize', { ...fields, csrf: doubleSubmit }, { cookie: `session=${session}; csrf=${doubleSubmit}` });

      // Assess
      expectErrorPage(reply, 403);
    });

    it('checks the client and redirect_uri of the consent POST again: a tampered one gets the error page', async () => {
      // Prepare
      const { browser: b } = await signedIn();
      const consent = await b.get(authorizePath(authorizationParams()));
      const fields = { ...formFields(consent.text, '/oauth/authorize'), decision: 'allow' };

      // Act
      const reply = await b.postForm('/oauth/authorize', { ...fields, redirect_uri: 'https://attacker.example/callback' });

      // Assess
      expectErrorPage(reply);
    });

    it('carries the framing, referrer and content security headers on its pages', async () => {
      // Prepare
      const { browser: b } = await signedIn();

      // Act
      const pages = [
        await browser().get('/login'),
        await b.get(authorizePath(authorizationParams())),
        await browser().get(authorizePath(authorizationParams({ client_id: 'no-such-client' }))),
      ];

      // Assess
      expect(pages.map((page) => page.status)).toEqual([200, 200, 400]);
      for (const page of pages) expectSecurityHeaders(page);
    });
  });

  describe('login', () => {
    it('gives a wrong password and an unknown e-mail address the same status and message', async () => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const wrongPassword = await signIn(browser({ sourceAddress: nextLoopbackAddress() }), { ...account, password: 'not the password' });
      const unknownEmail = await signIn(browser({ sourceAddress: nextLoopbackAddress() }), {
        user: { id: randomUUID(), email: `nobody-${randomUUID()}@example.com` }, password: account.password,
      });

      // Assess
      expect(wrongPassword.status).toBe(401);
      expect(unknownEmail.status).toBe(401);
      expect(alertOf(wrongPassword)).toBe('Incorrect e-mail address or password.');
      expect(alertOf(unknownEmail)).toBe(alertOf(wrongPassword));
      expect([...wrongPassword.setCookies, ...unknownEmail.setCookies].some((c) => c.startsWith('session='))).toBe(false);
    });

    it(`never sends the browser off-site after login: each of ${OFF_SITE_RETURN_TOS.length} attack return_to values becomes /account`, async () => {
      // Prepare: one account; a browser signed in for GET /login's own redirect
      const account = await createAccount(service);
      const signedInBrowser = browser();
      expect((await signIn(signedInBrowser, account)).status).toBe(303);
      expect(OFF_SITE_RETURN_TOS.length).toBeGreaterThanOrEqual(15);

      for (const attack of OFF_SITE_RETURN_TOS) {
        // Act: the login form posted with the value (as a page of another site would), and GET /login
        // with it, signed out (the form's hidden field) and signed in (the redirect)
        const b = browser();
        const form = await b.get(`/login?return_to=${encodeURIComponent(attack)}`);
        const posted = await b.postForm('/login', {
          ...formFields(form.text, '/login'), return_to: attack, email: account.user.email, password: account.password,
        });
        const already = await signedInBrowser.get(`/login?return_to=${encodeURIComponent(attack)}`);

        // Assess
        const label = JSON.stringify(attack);
        expect(form.status, label).toBe(200);
        expect(formFields(form.text, '/login').return_to, label).toBe('/account');
        expect(posted.status, label).toBe(303);
        expect(posted.location, label).toBe('/account');
        expect(already.status, label).toBe(302);
        expect(already.location, label).toBe('/account');
      }
    });

    it('keeps a local return_to after login, normalised', async () => {
      // Prepare
      const account = await createAccount(service);
      const params = authorizationParams();

      // Act
      const toAuthorize = await signIn(browser(), account, authorizePath(params));
      const toDeveloper = await signIn(browser(), account, '/developer/./x/../');

      // Assess
      expect(toAuthorize).toMatchObject({ status: 303, location: authorizePath(params) });
      expect(toDeveloper).toMatchObject({ status: 303, location: '/developer/' });
    });

    describe('throttling', () => {
      afterEach(() => {
        vi.useRealTimers();
      });

      it.each([
        ['an existing account', true],
        ['an account that does not exist', false],
      ])('throttles %s after 3 failures from one address, there only, until the wait is over', async (_, exists) => {
        // Prepare: time stands still, so the one-second wait is exact.
        const start = Date.now();
        vi.setSystemTime(start);
        const account: Account = exists
          ? await createAccount(service)
          : { user: { id: randomUUID(), email: `nobody-${randomUUID()}@example.com` }, password: 'any password' };
        const guessing = nextLoopbackAddress();
        const attacker = browser({ sourceAddress: guessing });
        for (let attempt = 0; attempt < 3; attempt++) {
          expect((await signIn(attacker, { ...account, password: `wrong ${attempt}` })).status).toBe(401);
        }

        // Act
        const throttled = await signIn(browser({ sourceAddress: guessing }), account);

        // Assess
        expect(throttled.status).toBe(429);
        expect(throttled.headers.get('retry-after')).toBe('1');
        expect(alertOf(throttled)).toBe('Too many failed attempts. Try again in 1 second.');
        expect(throttled.setCookies.some((c) => c.startsWith('session='))).toBe(false);
        // The limit is the account's from that address: another address signs it in, and that address other accounts.
        expect((await signIn(browser({ sourceAddress: nextLoopbackAddress() }), account)).status).toBe(exists ? 303 : 401);
        expect((await signIn(browser({ sourceAddress: guessing }), await createAccount(service))).status).toBe(303);
        vi.setSystemTime(start + 1001);
        expect((await signIn(browser({ sourceAddress: guessing }), account)).status).toBe(exists ? 303 : 401);
      });
    });
  });

  describe('logout', () => {
    it('ends the session on the server: the old cookie no longer signs in', async () => {
      // Prepare
      const { browser: b } = await signedIn();
      const path = authorizePath(authorizationParams());
      const consent = await b.get(path);
      const oldSession = b.jar.get('session');
      expect(oldSession).toBeDefined();

      // Act
      const reply = await b.postForm('/logout', formFields(consent.text, '/logout'));

      // Assess
      expect(reply.status).toBe(303);
      expect(reply.location).toBe('/login');
      expect(b.jar.get('session')).toBeUndefined();
      b.jar.set('session', oldSession!);
      const again = await b.get(path);
      expect(again.status).toBe(302);
      expect(again.location).toMatch(/^\/login\?return_to=/);
    });

    it('refuses a logout without the csrf field and keeps the session', async () => {
      // Prepare
      const { browser: b } = await signedIn();
      const path = authorizePath(authorizationParams());

      // Act
      const reply = await b.postForm('/logout', {});

      // Assess
      expectErrorPage(reply, 403);
      expect((await b.get(path)).status).toBe(200);
    });
  });
});
