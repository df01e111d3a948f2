import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { SCOPES } from '#shared/domain/scopes';
import { startExampleApp, type ExampleApp } from '#local/example-app';
import { DEMO_USERS } from '#local/seed';
import type { LocalService } from '#local/service';
import { accessibilityViolations, checkLayout, launchBrowser, PHONE, type TestBrowser } from '../support/browser';
import { CODE_SHAPE } from '../support/oauth-client';
import { tokenFor, useTable, useTestService } from '../support/service';

const ALL = 'read_user read_device write_device';
const ARTIFACTS = 'test-artifacts';
const [alice, bob] = DEMO_USERS;

interface TestClient {
  clientId: string;
  clientSecret: string;
  name: string;
  website: string;
  redirectUri: string;
}

describe('OAuth in a real browser', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  let api: ExpiringProxy;
  let app: ExampleApp;
  let callbackPage: Awaited<ReturnType<typeof startCallbackPage>>;
  let appClient: TestClient;
  let browser: TestBrowser;
  let page: Page;

  /** Registers an application, with one redirect URI on a port this test holds. */
  async function registerClient(
    name: string, redirectUri = callbackPage.redirectUri, clientId = `test-${randomUUID()}`, clientSecret = randomToken(),
  ): Promise<TestClient> {
    const client = { clientId, clientSecret, name, website: new URL(redirectUri).origin, redirectUri };
    await createClientRepo({ doc, table: service.tableName }).createClient({
      clientId,
      secretHash: hashSecret(clientSecret),
      name,
      description: 'Registered by the browser tests.',
      website: client.website,
      redirectUris: [client.redirectUri],
      developerId: bob.user.id,
      developerName: 'Ada Developer',
      createdAt: '2026-01-01T00:00:00.000',
    });
    return client;
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    api = await startExpiringProxy(service.apiUrl);
    callbackPage = await startCallbackPage();
    // The app needs its credentials at start and its client needs the app's port: pick the
    // credentials first, start the app on a free port, then register the client for that port.
    const clientId = `home-dashboard-${randomUUID()}`;
    const clientSecret = randomToken();
    app = await startExampleApp({ port: 0, authUrl: service.authUrl, apiUrl: api.url, clientId, clientSecret });
    appClient = await registerClient('Home Dashboard (test)', `${app.url}/callback`, clientId, clientSecret);
    browser = await launchBrowser();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await api?.stop();
    await callbackPage?.stop();
  });

  beforeEach(async () => {
    // Every test starts signed out everywhere (the service's and the example app's cookies).
    await browser.context.clearCookies();
  });

  describe('authorization code flow', () => {
    it('signs in, shows consent, and delivers a code that buys tokens for the API; a reused refresh token is refused', async () => {
      const client = await registerClient('Browser Test Client');
      const state = randomToken();
      const verifier = randomToken();

      await page.goto(authorizeUrl(service, client, { state, scope: ALL, verifier }));
      await signIn(page, alice);
      await page.getByRole('heading', { name: `Allow ${client.name} to access your account?` }).waitFor();
      const consent = await page.locator('main').innerText();
      await page.screenshot({ path: join(ARTIFACTS, 'consent-page.png'), fullPage: true });
      expect(await accessibilityViolations(page)).toEqual([]);
      const callback = await captureRedirect(page, client.redirectUri, () => page.getByRole('button', { name: 'Allow' }).click());

      expect(consent).toContain(client.name);
      expect(consent).toContain('Ada Developer');
      expect(consent).toContain(client.website);
      for (const words of Object.values(SCOPES)) expect(consent).toContain(words);
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
      const code = callback.searchParams.get('code');
      expect(code).toMatch(CODE_SHAPE);

      const exchange = await tokenRequest(service, client, {
        grant_type: 'authorization_code', code: code!, redirect_uri: client.redirectUri, code_verifier: verifier,
      });
      expect(exchange.status).toBe(200);
      expect(exchange.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: ALL });
      const devices = await getJson(`${service.apiUrl}/devices`, exchange.body.access_token);
      expect(devices.status).toBe(200);
      expect((devices.body as { id: string }[]).map((d) => d.id).sort()).toEqual(alice.devices.map((d) => d.id).sort());

      const refreshed = await tokenRequest(service, client, { grant_type: 'refresh_token', refresh_token: exchange.body.refresh_token });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.refresh_token).not.toBe(exchange.body.refresh_token);
      expect((await getJson(`${service.apiUrl}/user`, refreshed.body.access_token)).body).toMatchObject({ id: alice.user.id });
      // A retry of the original (a lost response) gets the same successor while that successor is unused;
      // once the successor has been used, presenting the original is reuse.
      const retry = await tokenRequest(service, client, { grant_type: 'refresh_token', refresh_token: exchange.body.refresh_token });
      expect(retry).toMatchObject({ status: 200, body: { refresh_token: refreshed.body.refresh_token } });
      const next = await tokenRequest(service, client, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token });
      expect(next.status).toBe(200);
      const reuse = await tokenRequest(service, client, { grant_type: 'refresh_token', refresh_token: exchange.body.refresh_token });
      expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      // Reuse revokes the whole grant: the newest refresh token stops working too.
      const afterReuse = await tokenRequest(service, client, { grant_type: 'refresh_token', refresh_token: next.body.refresh_token });
      expect(afterReuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    it('sends the user back with error=access_denied and the state when they deny', async () => {
      const client = await registerClient('Denied Client');
      const state = randomToken();

      await page.goto(authorizeUrl(service, client, { state, scope: 'read_device' }));
      await signIn(page, alice);
      const callback = await captureRedirect(page, client.redirectUri, () => page.getByRole('button', { name: 'Deny' }).click());

      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
      expect(callback.searchParams.has('code')).toBe(false);
    });

    it('skips the consent page when the same scopes are asked again', async () => {
      const client = await registerClient('Returning Client');
      await page.goto(authorizeUrl(service, client, { state: 'first', scope: 'read_user read_device' }));
      await signIn(page, alice);
      await captureRedirect(page, client.redirectUri, () => page.getByRole('button', { name: 'Allow' }).click());

      let response: Response | null = null;
      const second = await captureRedirect(page, client.redirectUri, async () => {
        response = await page.goto(authorizeUrl(service, client, { state: 'second', scope: 'read_device read_user' }));
      });

      // The authorize request answered with the redirect itself: no page in between.
      expect(response!.request().redirectedFrom()?.url()).toContain(`${service.authUrl}/oauth/authorize?`);
      expect(response!.request().redirectedFrom()?.redirectedFrom()).toBeNull();
      expect(second.searchParams.get('state')).toBe('second');
      const exchange = await tokenRequest(service, client, {
        grant_type: 'authorization_code', code: second.searchParams.get('code') ?? '', redirect_uri: client.redirectUri,
      });
      expect(exchange.status).toBe(200);
      expect(String(exchange.body.scope).split(' ').sort()).toEqual(['read_device', 'read_user']);
    });
  });

  describe('example application', () => {
    beforeEach(async () => {
      // Neither demo user has authorized the example app yet, whichever tests ran before.
      const grants = createGrantRepo({ doc, table: service.tableName });
      for (const { user } of DEMO_USERS) await grants.deleteConsent(user.id, appClient.clientId);
    });

    it('connects, lists the devices with the user name, and switches away mode', async () => {
      const device = alice.devices[0]; // Living room, away mode off
      await connectExampleApp(page, app, alice);

      await page.getByRole('heading', { name: `Hello ${alice.user.firstname} ${alice.user.lastname}` }).waitFor();
      const rows = await page.getByRole('row').allInnerTexts();
      for (const d of alice.devices) {
        expect(rows.find((row) => row.startsWith(d.name))).toMatch(new RegExp(
          `${d.place}\\s+${d.connected ? 'Connected' : 'Offline'}\\s+${d.active ? 'On' : 'Off'}`));
      }
      expect(await page.content()).not.toMatch(/eyJ[\w-]{10,}/); // no token in the page
      const cookies = await browser.context.cookies(app.url);
      expect(cookies.find((c) => c.name === 'home_dashboard_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(await page.evaluate('document.cookie')).toBe(''); // scripts see no cookie at all

      await page.getByRole('button', { name: `Turn on away mode for ${device.name}` }).click();
      await page.getByRole('status').filter({ hasText: `Away mode is now on for ${device.name}.` }).waitFor();
      await page.screenshot({ path: join(ARTIFACTS, 'example-app-devices.png'), fullPage: true });
      expect(await accessibilityViolations(page)).toEqual([]);

      expect(await page.getByRole('row').filter({ hasText: device.name }).locator('strong').innerText()).toBe('On');
      await page.getByRole('button', { name: `Turn off away mode for ${device.name}` }).waitFor();
      const token = await tokenFor(service, alice.user.id, ['read_device']);
      const stored = await getJson(`${service.apiUrl}/devices/${device.id}`, token);
      expect(stored.body).toMatchObject([{ id: device.id, active: true }]);
    });

    it('refreshes the tokens once when the API refuses an expired access token', async () => {
      await connectExampleApp(page, app, bob);
      await page.getByRole('heading', { name: `Hello ${bob.user.firstname} ${bob.user.lastname}` }).waitFor();
      const tokensBefore = api.tokensSeen.size;
      const refusedBefore = api.refused;

      api.expireSeenTokens(); // as if the access token's hour had passed
      await page.reload();

      await page.getByRole('heading', { name: `Hello ${bob.user.firstname} ${bob.user.lastname}` }).waitFor();
      expect(await page.getByRole('row').count()).toBe(bob.devices.length + 1);
      expect(api.refused - refusedBefore).toBe(2); // GET /devices and GET /user, sent together
      expect(api.tokensSeen.size).toBe(tokensBefore + 1); // one shared refresh, not one per call
    });

    it('explains a denial in words', async () => {
      await page.goto(app.url);
      await page.getByRole('link', { name: 'Connect your devices' }).click();
      await signIn(page, alice);
      await page.getByRole('button', { name: 'Deny' }).click();

      await page.getByRole('heading', { name: 'Your devices were not connected' }).waitFor();
      expect(await page.getByRole('alert').innerText()).toBe('You chose not to give Home Dashboard access to your devices. Nothing was shared.');
      expect(page.url()).toContain(`${app.url}/callback?error=access_denied`);
    });
  });

  describe('layout on a phone and a desktop', () => {
    /** What a 390 px phone shows of a page below its browser's bars. */
    const PHONE_FOLD = 664;

    afterAll(async () => {
      await page?.setViewportSize({ width: 1000, height: 700 });
    });

    /** Whether the element's bottom edge is within the first `height` pixels of a 390 px wide page. */
    async function aboveFoldOnPhone(button: ReturnType<Page['getByRole']>, height: number) {
      await page.setViewportSize({ width: PHONE.width, height });
      const box = await button.boundingBox();
      return box !== null && box.y + box.height <= height;
    }

    it('fits every page of the service at 390 px and 1280 px, axe clean, with the sign-in button above the fold', async () => {
      await page.goto(`${service.authUrl}/login`);
      await checkLayout(page, 'login');
      expect.soft(await aboveFoldOnPhone(page.getByRole('button', { name: 'Sign in' }), PHONE_FOLD)).toBe(true);
      expect.soft((await page.getByRole('banner').boundingBox())?.height, 'header height at 390 px').toBeLessThanOrEqual(110);

      await page.goto(`${service.authUrl}/signup`);
      await checkLayout(page, 'sign-up');
      expect.soft(await aboveFoldOnPhone(page.getByRole('button', { name: 'Create account' }), PHONE.height)).toBe(true);

      const missing = await page.goto(`${service.authUrl}/no-such-page`);
      expect(missing?.status()).toBe(404);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await checkLayout(page, '404 page');

      const refused = await page.goto(authorizeUrl(service, { ...appClient, clientId: 'no-such-client' }, { state: 's', scope: 'read_user' }));
      expect(refused?.status()).toBe(400);
      expect(await page.getByRole('alert').innerText()).toBe('This application is not registered, so it cannot ask for access.');
      expect(await page.getByRole('link', { name: 'Go to the home page' }).getAttribute('href')).toBe('/');
      await checkLayout(page, 'error page');

      const client = await registerClient('Layout Test Client');
      await page.goto(authorizeUrl(service, client, { state: 'layout', scope: ALL }));
      await signIn(page, bob);
      await page.getByRole('heading', { name: `Allow ${client.name} to access your account?` }).waitFor();
      await checkLayout(page, 'consent');
      expect.soft(await aboveFoldOnPhone(page.getByRole('button', { name: 'Allow' }), PHONE.height)).toBe(true);
      expect.soft((await page.getByRole('banner').boundingBox())?.height, 'signed-in header height at 390 px').toBeLessThanOrEqual(110);

      await page.goto(`${service.authUrl}/account`);
      await page.getByRole('heading', { name: 'Your account' }).waitFor();
      await checkLayout(page, 'account');
      await page.goto(`${service.authUrl}/developer`);
      await page.getByRole('heading', { name: 'Developer console' }).waitFor();
      await checkLayout(page, 'developer console');
      await page.goto(`${service.authUrl}/developer/apps/${encodeURIComponent(client.clientId)}`);
      await page.getByRole('heading', { name: client.name }).waitFor();
      await checkLayout(page, 'app page');
    });

    it('fits the example application at 390 px and 1280 px, axe clean, with the user\'s avatar', async () => {
      await createGrantRepo({ doc, table: service.tableName }).deleteConsent(alice.user.id, appClient.clientId);
      await page.goto(app.url);
      await checkLayout(page, 'example app start');
      await connectExampleApp(page, app, alice);
      await page.getByRole('heading', { name: `Hello ${alice.user.firstname} ${alice.user.lastname}` }).waitFor();
      // The avatar_url, resolved against the resource API, is a 120 px image the browser could load.
      const loaded = "(() => { const img = document.querySelector('img.avatar'); return img.complete && img.naturalWidth })()";
      await expect.poll(() => page.evaluate(loaded)).toBe(120);
      await checkLayout(page, 'example app devices');
    });
  });

  async function connectExampleApp(page: Page, exampleApp: ExampleApp, who: (typeof DEMO_USERS)[number]) {
    await page.goto(exampleApp.url);
    await page.getByRole('link', { name: 'Connect your devices' }).click();
    await signIn(page, who);
    await page.getByRole('heading', { name: `Allow ${appClient.name} to access your account?` }).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${exampleApp.url}/devices`);
  }
});

function authorizeUrl(service: LocalService, client: TestClient, options: { state: string; scope: string; verifier?: string }): string {
  const params = new URLSearchParams({
    response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, scope: options.scope, state: options.state,
  });
  if (options.verifier) {
    params.set('code_challenge', createHash('sha256').update(options.verifier).digest('base64url'));
    params.set('code_challenge_method', 'S256');
  }
  return `${service.authUrl}/oauth/authorize?${params}`;
}

/** Fills the service's login form by its labels; ends on the page the login leads to. */
async function signIn(page: Page, who: (typeof DEMO_USERS)[number]) {
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('E-mail address').fill(who.user.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/login');
}

/** Runs `action` and returns the URL at `redirectUri` the browser was sent to. */
async function captureRedirect(page: Page, redirectUri: string, action: () => Promise<unknown>): Promise<URL> {
  await action();
  await page.waitForURL((url) => `${url.origin}${url.pathname}` === redirectUri);
  return new URL(page.url());
}

/**
 * The redirect URI of the protocol tests' clients: a page that only says the callback arrived.
 * (Playwright's page.route cannot intercept a redirect's target, so a real server answers.)
 */
async function startCallbackPage(): Promise<{ redirectUri: string; stop(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Callback</title><p>Callback received.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://localhost:${(server.address() as { port: number }).port}/callback`,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** POST /oauth/token with the client's credentials in the body (client_secret_post, as docs/api.md#client-authentication). */
async function tokenRequest(service: LocalService, client: TestClient, params: Record<string, string>) {
  const response = await fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...params, client_id: client.clientId, client_secret: client.clientSecret }),
  });
  return { status: response.status, body: (await response.json()) as { access_token: string; refresh_token: string; [member: string]: unknown } };
}

async function getJson(url: string, accessToken: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: response.status, body: (await response.json()) as unknown };
}

interface ExpiringProxy {
  url: string;
  /** Distinct Authorization headers seen: one per access token the app used. */
  tokensSeen: Set<string>;
  /** How many requests were refused as expired. */
  refused: number;
  /** From now on, refuse every token seen so far, as API Gateway refuses an expired token. */
  expireSeenTokens(): void;
  stop(): Promise<void>;
}

/** A pass-through in front of the resource API that can make access tokens expire on demand. */
async function startExpiringProxy(target: string): Promise<ExpiringProxy> {
  const expired = new Set<string>();
  const proxy: Omit<ExpiringProxy, 'url' | 'stop'> = {
    tokensSeen: new Set(),
    refused: 0,
    expireSeenTokens: () => proxy.tokensSeen.forEach((token) => expired.add(token)),
  };
  const server: Server = createServer(async (req, res) => {
    // Requests without a token (the avatar images) pass: only the authorizer's routes see tokens.
    const authorization = req.headers.authorization ?? '';
    if (authorization) proxy.tokensSeen.add(authorization);
    if (authorization && expired.has(authorization)) {
      proxy.refused++;
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token", error_description="the token has expired"' });
      res.end('{"message":"Unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: Object.fromEntries(['authorization', 'content-type', 'cache-control'].flatMap((name) =>
        req.headers[name] ? [[name, String(req.headers[name])]] : [])),
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, {
    url: `http://localhost:${(server.address() as { port: number }).port}`,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  });
}
