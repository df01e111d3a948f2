import { createHash, randomUUID } from 'node:crypto';
import { PASSKEY_PAGE_CODE, PASSKEY_SCRIPT_PATH } from '#shared/views/passkey-ui';
import { UpdateCommand } from '#shared/data/commands';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { familyKey } from '#shared/data/item-keys';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { hashSecret, randomToken } from '#shared/secrets';
import { launchBrowser, type TestBrowser } from '../support/browser';
import {
  type Account, authorizationParams, authorize, authorizePath, Browser, CODE_SHAPE, createAccount, formFields, obtainCode, signIn, textOf,
} from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

// What the voice assistants check before they link accounts, played against the local service: the
// checks of Google's account-linking validation ("OAuth account linking": the authorization page in a
// phone's browser, state, the token endpoint's answers, invalid_grant for a bad refresh token,
// several unexpired refresh tokens) and Alexa's account-linking requirements (redirect URIs of its
// three regions, HTTP Basic or body credentials, a refresh that keeps working: a failed one unlinks
// the user).

/** Redirect URIs of the assistants' shapes: Google's (production and sandbox) and Alexa's three regions. */
const GOOGLE = 'https://oauth-redirect.googleusercontent.com/r/smart-home-link-4711';
const GOOGLE_SANDBOX = 'https://oauth-redirect-sandbox.googleusercontent.com/r/smart-home-link-4711';
const ALEXA_NA = 'https://pitangui.amazon.com/api/skill/link/M2AAAAAAAAAAAA';
const ALEXA_EU = 'https://layla.amazon.com/api/skill/link/M2AAAAAAAAAAAA';
const ALEXA_FE = 'https://alexa.amazon.co.jp/api/skill/link/M2AAAAAAAAAAAA';
const ASSISTANT_REDIRECTS = [GOOGLE, GOOGLE_SANDBOX, ALEXA_NA, ALEXA_EU, ALEXA_FE];

const ALL = 'read_user read_device write_device';
const HOUR_MS = 3600 * 1000;

interface App { clientId: string; clientSecret: string; name: string }
interface Reply { status: number; headers: Headers; body: Record<string, unknown> }
interface Tokens { access_token: string; refresh_token: string; token_type: string; expires_in: number; scope: string }
type CredentialsIn = 'body' | 'basic';

const pkce = () => {
  const verifier = randomToken();
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** A `state` as an assistant sends it: long, opaque, with characters that must survive encoding. */
const assistantState = () => `${randomToken()}${randomToken()}-._~+/=%20 ${randomUUID()}`;

describe('account linking as Google Home and Alexa check it', () => {
  const service = useTestService();
  const { doc, repos } = useTable(service);
  let app: App;

  /** Registers the assistant's application through the developer console, as its developer would; the secret is read off the page that shows it once. */
  async function registerAssistantApp(redirectUris: string[]): Promise<App> {
    const developer = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, developer)).status).toBe(303);
    const name = `Assistant link ${randomUUID().slice(0, 8)}`;
    const console = await b.get('/developer');
    const registered = await b.postForm('/developer/apps', {
      ...formFields(console.text, '/developer/apps'),
      name, description: 'Links accounts for a voice assistant.', website: 'https://assistant.example', redirect_uris: redirectUris.join('\n'),
    });
    expect(registered.status, textOf(registered.text).slice(0, 300)).toBe(303);
    const shown = await b.get(registered.location!);
    const clientId = /id="client-id">([^<]+)</.exec(shown.text)?.[1];
    const clientSecret = /id="client-secret">([^<]+)</.exec(shown.text)?.[1];
    if (!clientId || !clientSecret) throw new Error(`no credentials on: ${textOf(shown.text).slice(0, 300)}`);
    return { clientId, clientSecret, name };
  }

  /** POSTs a form to the authorization server with the application's credentials in the body (Google's default) or with HTTP Basic (Alexa's recommended scheme). */
  async function post(path: string, fields: Record<string, string>, how: CredentialsIn = 'body', client: Pick<App, 'clientId' | 'clientSecret'> = app): Promise<Reply> {
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
    const response = await fetch(`${service.authUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(how === 'basic' ? { authorization: basic } : {}) },
      body: new URLSearchParams({ ...fields, ...(how === 'body' ? { client_id: client.clientId, client_secret: client.clientSecret } : {}) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const refresh = (refreshToken: string, how: CredentialsIn = 'body') => post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken }, how);

  /** A 200 token answer, as both assistants require it: bearer, an expiry, a refresh token, never cached. */
  function expectTokens(reply: Reply, scope = ALL): Tokens {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope });
    expect(reply.headers.get('cache-control')).toBe('no-store');
    return reply.body as unknown as Tokens;
  }

  /** Exactly HTTP 400 with `"error": "invalid_grant"`: what makes Google and Alexa drop the link rather than retry. */
  function expectInvalidGrant(reply: Reply, label?: string) {
    expect(reply.status, label).toBe(400);
    expect(reply.body.error, label).toBe('invalid_grant');
    expect(Object.keys(reply.body).sort(), label).toEqual(['error', 'error_description']);
    expect(reply.headers.get('content-type'), label).toMatch(/^application\/json/);
  }

  /** The link's token family, as stored (its id is in every token of the link). */
  const familyOf = (token: string) => repos.grants.getFamily(grantTokenNames(token)!.familyId);

  /** The user links the assistant's application: the authorization (signed in on `b`), then the code exchange. */
  async function link(account: Account, options: { redirectUri?: string; how?: CredentialsIn; b?: Browser } = {}) {
    const redirectUri = options.redirectUri ?? GOOGLE;
    const { verifier, challenge } = pkce();
    const state = assistantState();
    const params = {
      ...authorizationParams({ client_id: app.clientId, redirect_uri: redirectUri, scope: ALL, state }),
      code_challenge: challenge, code_challenge_method: 'S256',
      // Google adds the user's language; an authorization server ignores what it does not know.
      user_locale: 'en-US',
    };
    const callback = await authorize(options.b ?? new Browser(service.authUrl), params, { account });
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    expect(callback.searchParams.get('state')).toBe(state);
    const code = callback.searchParams.get('code');
    expect(code).toMatch(CODE_SHAPE);
    const exchange = await post('/oauth/token', { grant_type: 'authorization_code', code: code!, redirect_uri: redirectUri, code_verifier: verifier }, options.how);
    return expectTokens(exchange);
  }

  /** What the resource API says of the access token: 200 with the user, or its refusal. */
  async function userOf(accessToken: string) {
    const response = await fetch(`${service.apiUrl}/user`, { headers: { authorization: `Bearer ${accessToken}` } });
    return { status: response.status, body: (await response.json()) as { id?: string } };
  }

  beforeAll(async () => {
    app = await registerAssistantApp(ASSISTANT_REDIRECTS);
  });

  describe('redirect URIs of the assistants', () => {
    it('registers Google\'s and Alexa\'s redirect URIs exactly as given', async () => {
      // Act
      const stored = await repos.clients.getClient(app.clientId);

      // Assess
      expect(stored?.redirectUris).toEqual(ASSISTANT_REDIRECTS);
    });

    it.each(ASSISTANT_REDIRECTS)('sends the user back to %s with the code and the state unchanged', async (redirectUri) => {
      // Prepare
      const account = await createAccount(service);
      const state = assistantState();

      // Act
      const { callback } = await obtainCode(new Browser(service.authUrl), { client_id: app.clientId, redirect_uri: redirectUri, state }, account);

      // Assess
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
    });

    it.each([
      ['a trailing slash', `${GOOGLE}/`],
      ['another Google project', GOOGLE.replace('smart-home-link-4711', 'smart-home-link-4712')],
      ['a longer path', `${ALEXA_NA}/extra`],
      ['a query added', `${ALEXA_EU}?x=1`],
      ['plain http', ALEXA_FE.replace('https:', 'http:')],
      ['the host in capitals', GOOGLE.replace('oauth-redirect.googleusercontent.com', 'OAUTH-REDIRECT.googleusercontent.com')],
      ['another Alexa vendor', ALEXA_NA.replace('M2AAAAAAAAAAAA', 'M2BBBBBBBBBBBB')],
    ])('refuses %s with an error page and no redirect: the match is exact', async (_, redirectUri) => {
      // Prepare
      const b = new Browser(service.authUrl);
      expect((await signIn(b, await createAccount(service))).status).toBe(303);

      // Act
      const reply = await b.get(authorizePath(authorizationParams({ client_id: app.clientId, redirect_uri: redirectUri })));

      // Assess
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(textOf(reply.text)).toContain('The redirect address in this request is not registered for this application.');
    });
  });

  describe('the authorization page in a phone\'s browser (Chromium at 390 px)', () => {
    let browser: TestBrowser;
    let page: Page;

    beforeAll(async () => {
      browser = await launchBrowser();
      page = browser.page;
      await page.setViewportSize({ width: 390, height: 844 });
    });

    afterAll(async () => {
      await browser?.close();
    });

    /**
     * Usable on a 390 px phone without pop-ups: nothing scrolls sideways, no script but `scripts` (the
     * sign-in page's passkey script of this host, which opens no window: PASSKEY_PAGE_CODE), no link or
     * form opens another window, and `button` is on screen.
     */
    async function expectUsableOnPhone(label: string, button: Locator, scripts: string[] = []) {
      const facts = (await page.evaluate(`({
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        viewport: document.querySelector('meta[name="viewport"]')?.getAttribute('content') ?? null,
        scripts: [...document.scripts].map((script) => script.getAttribute('src')),
        targets: document.querySelectorAll('[target]').length,
      })`)) as { scrollWidth: number; innerWidth: number; viewport: string | null; scripts: string[]; targets: number };
      expect(facts, label).toEqual({ scrollWidth: 390, innerWidth: 390, viewport: expect.stringContaining('width=device-width') as string, scripts, targets: 0 });
      const box = await button.boundingBox();
      expect(box, `${label}: ${String(button)}`).not.toBeNull();
      expect(box!.x, label).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, label).toBeLessThanOrEqual(390);
      expect(box!.y + box!.height, label).toBeLessThanOrEqual(844);
    }

    it('signs in and consents at 390 px in one tab, no pop-up, and sends the browser to Google\'s redirect URI with the state unchanged and a code that PKCE redeems', async () => {
      // Prepare
      const account = await createAccount(service);
      const windows: string[] = [];
      browser.context.on('page', (opened) => windows.push(opened.url()));
      const { verifier, challenge } = pkce();
      const state = assistantState();
      const params = new URLSearchParams({
        response_type: 'code', client_id: app.clientId, redirect_uri: GOOGLE, scope: ALL, state,
        code_challenge: challenge, code_challenge_method: 'S256', user_locale: 'en-US',
      });

      // Act
      const opened = await page.goto(`${service.authUrl}/oauth/authorize?${params}`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await expectUsableOnPhone('sign-in', page.getByRole('button', { name: 'Sign in' }), [PASSKEY_SCRIPT_PATH]);
      expect(PASSKEY_PAGE_CODE).not.toContain('window.open');
      await page.getByLabel('E-mail address').fill(account.user.email);
      await page.getByLabel('Password').fill(account.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: `Allow ${app.name} to access your account?` }).waitFor();
      await expectUsableOnPhone('consent', page.getByRole('button', { name: 'Allow' }));
      // The browser cannot reach Google from here (no network beyond loopback): the request it starts is the answer.
      const sentBack = page.waitForRequest((request) => request.url().startsWith(`${GOOGLE}?`));
      await page.getByRole('button', { name: 'Allow' }).click();
      const callback = new URL((await sentBack).url());

      // Assess
      // No script but the sign-in page's passkey script of this host may run (it opens no window):
      // default-src 'none', scripts of this host only, none inline.
      const csp = opened?.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp.match(/script-src[^;]*/g)).toEqual(["script-src 'self'"]);
      expect(windows).toEqual([]);
      expect(browser.context.pages()).toHaveLength(1);
      expect(`${callback.origin}${callback.pathname}`).toBe(GOOGLE);
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
      const exchange = await post('/oauth/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: GOOGLE, code_verifier: verifier });
      expect((await userOf(expectTokens(exchange).access_token)).body.id).toBe(account.user.id);
    });
  });

  describe('the token endpoint', () => {
    it.each<[string, CredentialsIn]>([
      ['in the body (Google)', 'body'],
      ['with HTTP Basic (Alexa)', 'basic'],
    ])('exchanges a code with code_challenge (S256) and the client credentials %s: expires_in present, and the API takes the token', async (_, how) => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const tokens = await link(account, { how, redirectUri: how === 'basic' ? ALEXA_NA : GOOGLE });

      // Assess
      expect(tokens.expires_in).toBe(3600);
      expect(await userOf(tokens.access_token)).toMatchObject({ status: 200, body: { id: account.user.id } });
    });

    it.each<[string, CredentialsIn]>([
      ['in the body', 'body'],
      ['with HTTP Basic', 'basic'],
    ])('a refresh with the credentials %s returns a new access token and a new refresh token', async (_, how) => {
      // Prepare
      const account = await createAccount(service);
      const linked = await link(account, { how });

      // Act
      const refreshed = expectTokens(await refresh(linked.refresh_token, how));

      // Assess
      expect(refreshed.access_token).not.toBe(linked.access_token);
      expect(refreshed.refresh_token).not.toBe(linked.refresh_token);
      expect(await userOf(refreshed.access_token)).toMatchObject({ status: 200, body: { id: account.user.id } });
    });

    it('answers an invalid refresh token with exactly HTTP 400 invalid_grant, and changes nothing', async () => {
      // Prepare: a live link, a link of another application (the demo client's), and a link ended by its assistant
      const account = await createAccount(service);
      const live = await link(account);
      const before = await familyOf(live.refresh_token);
      const demo = new Browser(service.authUrl);
      const { code } = await obtainCode(demo, {}, account);
      const demoTokens = expectTokens(await post('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: DEMO_CLIENT.redirectUris[0] }, 'body', DEMO_CLIENT), 'read_device');
      const ended = await link(account);
      expect((await post('/oauth/revoke', { token: ended.refresh_token })).status).toBe(200);
      const endedFamily = await familyOf(ended.refresh_token);

      // Act
      const replies = {
        garbage: await refresh('not-a-refresh-token'),
        unknownFamily: await refresh(`${account.user.id}.${randomUUID()}.${randomToken()}`, 'basic'),
        anotherUsersName: await refresh(live.refresh_token.replace(/^[^.]+/, randomUUID())),
        otherApplication: await refresh(demoTokens.refresh_token, 'basic'),
        unlinked: await refresh(ended.refresh_token),
      };

      // Assess
      for (const [name, reply] of Object.entries(replies)) expectInvalidGrant(reply, name);
      expect(await familyOf(live.refresh_token)).toEqual(before);
      expect(await familyOf(demoTokens.refresh_token)).toMatchObject({ status: 'active', activeTokenHash: hashSecret(demoTokens.refresh_token) });
      expect(await familyOf(ended.refresh_token)).toEqual(endedFamily);
      expectTokens(await refresh(live.refresh_token));
    });
  });

  describe('refresh tokens the assistants can rely on', () => {
    it('keeps the previous refresh token valid until the new one is used: the same new refresh token and a fresh access token, written nowhere', async () => {
      // Prepare: a refresh whose answer the assistant lost
      const account = await createAccount(service);
      const linked = await link(account);
      const lost = expectTokens(await refresh(linked.refresh_token));
      const stored = await familyOf(linked.refresh_token);

      // Act
      const again = expectTokens(await refresh(linked.refresh_token, 'basic'));
      const thirdTime = expectTokens(await refresh(linked.refresh_token));

      // Assess
      expect(again.refresh_token).toBe(lost.refresh_token);
      expect(thirdTime.refresh_token).toBe(lost.refresh_token);
      expect(new Set([lost.access_token, again.access_token, thirdTime.access_token]).size).toBe(3);
      expect(await familyOf(linked.refresh_token)).toEqual(stored);
      expect(await userOf(again.access_token)).toMatchObject({ status: 200 });
    });

    it('a lost answer retried an hour later gets the same new refresh token, which then works', async () => {
      // Prepare: the rotation an hour in the past (the service runs on the real clock; the family's
      // rotation time is the only time a rotated token was ever judged by)
      const account = await createAccount(service);
      const linked = await link(account);
      const lost = expectTokens(await refresh(linked.refresh_token));
      await doc.send(new UpdateCommand({
        TableName: service.tableName, Key: familyKey(grantTokenNames(linked.refresh_token)!.familyId),
        UpdateExpression: 'SET rotatedAt = rotatedAt - :hour', ExpressionAttributeValues: { ':hour': HOUR_MS },
      }));

      // Act
      const retry = await refresh(linked.refresh_token);

      // Assess
      expect(expectTokens(retry).refresh_token).toBe(lost.refresh_token);
      const next = expectTokens(await refresh(lost.refresh_token));
      expect(await familyOf(next.refresh_token)).toMatchObject({ status: 'active', activeTokenHash: hashSecret(next.refresh_token), previousTokenHash: hashSecret(lost.refresh_token) });
    });

    it('two concurrent refreshes with one refresh token: exactly one rotation, and both get the same new refresh token', async () => {
      // Prepare: two instances of the assistant's cluster refresh at once
      const account = await createAccount(service);
      const linked = await link(account);

      // Act
      const [a, b] = await Promise.all([refresh(linked.refresh_token), refresh(linked.refresh_token, 'basic')]);

      // Assess
      const [first, second] = [expectTokens(a!), expectTokens(b!)];
      expect(first.refresh_token).toBe(second.refresh_token);
      expect(first.access_token).not.toBe(second.access_token);
      expect(await familyOf(linked.refresh_token)).toMatchObject({
        status: 'active', activeTokenHash: hashSecret(first.refresh_token), previousTokenHash: hashSecret(linked.refresh_token),
      });
      expectTokens(await refresh(first.refresh_token));
    });

    it('reuse of the previous refresh token after the new one was used ends the link (RFC 9700 §4.14.2)', async () => {
      // Prepare
      const account = await createAccount(service);
      const linked = await link(account);
      const second = expectTokens(await refresh(linked.refresh_token));
      const third = expectTokens(await refresh(second.refresh_token));

      // Act
      const reuse = await refresh(linked.refresh_token);

      // Assess
      expectInvalidGrant(reuse);
      expect(await familyOf(linked.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'refresh_token_reuse' });
      expectInvalidGrant(await refresh(third.refresh_token));
      expectInvalidGrant(await refresh(second.refresh_token));
    });
  });

  describe('several links of one account by one application', () => {
    it('two assistant users linking the same home: two links that each keep refreshing, and unlinking one (RFC 7009) ends only that one', async () => {
      // Prepare: one account (the home), linked from two phones (two assistant users), each its own browser session
      const home = await createAccount(service);
      const first = await link(home, { b: new Browser(service.authUrl) });
      const second = await link(home, { b: new Browser(service.authUrl), redirectUri: GOOGLE_SANDBOX });
      expect(grantTokenNames(first.refresh_token)!.familyId).not.toBe(grantTokenNames(second.refresh_token)!.familyId);
      let [a, b, aPrevious] = [first, second, first];
      for (let round = 0; round < 3; round++) {
        aPrevious = a;
        a = expectTokens(await refresh(a.refresh_token));
        b = expectTokens(await refresh(b.refresh_token, 'basic'));
      }
      // Each link's previous token still works while its new one is unused, whatever the other link does.
      const aAgain = expectTokens(await refresh(aPrevious.refresh_token));
      expect(aAgain.refresh_token).toBe(a.refresh_token);
      expect(await userOf(aAgain.access_token)).toMatchObject({ status: 200, body: { id: home.user.id } });

      // Act: the first assistant user unlinks
      const unlinked = await post('/oauth/revoke', { token: a.refresh_token, token_type_hint: 'refresh_token' }, 'basic');

      // Assess
      expect(unlinked).toMatchObject({ status: 200, body: {} });
      expectInvalidGrant(await refresh(a.refresh_token));
      expectInvalidGrant(await refresh(aPrevious.refresh_token));
      expect(await familyOf(first.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'token_revoked' });
      const stillLinked = expectTokens(await refresh(b.refresh_token));
      expect(await userOf(stillLinked.access_token)).toMatchObject({ status: 200, body: { id: home.user.id } });
      expect(await familyOf(second.refresh_token)).toMatchObject({ status: 'active' });
      // The home's consent stands: linking again asks nothing and gives a third, working link.
      expect(await repos.grants.getConsent(home.user.id, app.clientId)).toMatchObject({ scopes: ALL.split(' ') });
      const relinked = await link(home);
      expectTokens(await refresh(relinked.refresh_token));
    });
  });
});
