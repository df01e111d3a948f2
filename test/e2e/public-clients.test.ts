import { createServer, type Server } from 'node:http';
import { ScanCommand } from '#shared/data/commands';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { captureOutput } from '../support/capture-output';
import { ALICE, authorize, authorizePath, Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

// Public clients (RFC 8252, OAuth 2.1): native and browser applications, which
// cannot keep a secret. Registered in the console without one, they name themselves with client_id
// alone (token_endpoint_auth_method none), must use PKCE (S256), redirect to a loopback address at
// any port, a private-use scheme or https, and a browser application's pages call the token and
// revocation endpoints cross-origin (CORS for the origins of its redirect URIs). Shown here with a
// real native-style client (oauth4webapi and a loopback listener), a real browser application (a page
// of another origin in Chromium), and the refusals of bad input, each with nothing written. The CORS
// answers over HTTP, refusals included: test/e2e/token-endpoint-cors.test.ts.

// Before any import: the one logger reads its level when its module loads (the logs are checked below).
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
});

// Which functions ran: the Lambda context the local gateway builds names each one (as in gateway-parity.test.ts).
const invoked = vi.hoisted(() => [] as string[]);
vi.mock('#local/lambda-context', async (importOriginal) => {
  const original = await importOriginal<typeof import('#local/lambda-context')>();
  return {
    lambdaContext: (functionName: string, requestId: string) => {
      invoked.push(functionName);
      return original.lambdaContext(functionName, requestId);
    },
  };
});

// The issuer is http://localhost:… here; the library refuses plain HTTP unless told this is a local test.
const LOCAL_HTTP = { [oauth.allowInsecureRequests]: true } as const;
const ALICE_DEVICES = DEMO_USERS[0].devices.map((d) => d.id).sort();

describe('public clients: native and browser applications', () => {
  // Everything the service logs from here on is kept, and checked for the flows' secrets at the end.
  const captured = captureOutput(['stdout', 'stderr']);
  /** Every code, verifier and token the flows handled. */
  const secrets: string[] = [];
  const service = useTestService();
  const { doc, repos } = useTable(service);
  let as: oauth.AuthorizationServer;
  let developer: { b: Browser; id: string };

  beforeAll(async () => {
    const issuer = new URL(service.authUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, LOCAL_HTTP));
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    developer = { b, id: account.user.id };
  });

  /** Posts the console's registration form as the developer; the reply. */
  async function postRegistration(fields: Record<string, string>) {
    const page = await developer.b.get('/developer');
    return developer.b.postForm('/developer/apps', {
      ...formFields(page.text, '/developer/apps'), name: 'Native test app', description: '', website: 'https://native.example', ...fields,
    });
  }

  /** Registers a native or browser application in the console; its client id. */
  async function registerPublicApp(redirectUris: string[]): Promise<string> {
    const reply = await postRegistration({ client_type: 'public', redirect_uris: redirectUris.join('\n') });
    expect(reply.status, textOf(reply.text).slice(0, 300)).toBe(303);
    const clientId = /^\/developer\/apps\/([^/?]+)$/.exec(reply.location ?? '')?.[1];
    expect(clientId, `redirected to ${reply.location}`).toBeDefined();
    return decodeURIComponent(clientId!);
  }

  /** The items of the table that belong to a client, but the client's own: codes, families, consents. */
  async function grantItemsOf(clientId: string) {
    const { Items = [] } = await doc.send(new ScanCommand({
      TableName: service.tableName, FilterExpression: 'clientId = :client', ExpressionAttributeValues: { ':client': clientId }, ConsistentRead: true,
    }));
    return Items.filter((item) => !String(item.pk).startsWith('CLIENT#'));
  }

  const tokenRequest = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields),
    });

  /** A code for a public client, from Alice's browser, with PKCE; the redirect it came back with. */
  async function codeFor(clientId: string, redirectUri: string) {
    const verifier = oauth.generateRandomCodeVerifier();
    const params = {
      response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read_device',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    };
    const callback = await authorize(new Browser(service.authUrl), params, { account: ALICE });
    const code = callback.searchParams.get('code');
    if (!code) throw new Error(`no code in ${callback.href}`);
    secrets.push(code, verifier);
    return { code, verifier, callback };
  }

  describe('registration in the developer console', () => {
    it('registers a native or browser application without a secret: none is created, shown or rotatable, and its page says so', async () => {
      // Act
      const reply = await postRegistration({
        client_type: 'public', redirect_uris: 'http://127.0.0.1/callback\nhttp://[::1]/callback\ncom.example.nativetest:/callback\nhttps://spa.example/callback',
      });

      // Assess
      expect(reply.status).toBe(303);
      expect(reply.location).toMatch(/^\/developer\/apps\/[0-9a-f-]{36}$/);
      expect(reply.setCookies.some((cookie) => cookie.startsWith('reveal='))).toBe(false);
      const clientId = reply.location!.split('/').pop()!;
      const stored = await repos.clients.getClient(clientId);
      expect(stored).toMatchObject({ clientType: 'public', redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/callback', 'com.example.nativetest:/callback', 'https://spa.example/callback'] });
      expect(stored).not.toHaveProperty('secretHash');
      expect(stored).not.toHaveProperty('secretCreatedAt');
      const page = await developer.b.get(reply.location!);
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Native or browser application.');
      expect(page.text).toContain('id="no-secret"');
      expect(page.text).not.toContain('Generate a new client secret');
      const rotate = await developer.b.postForm(`${reply.location}/secret`, { ...formFields(page.text, `${reply.location}`), confirm: 'yes' });
      const retire = await developer.b.postForm(`${reply.location}/secret/retire`, { ...formFields(page.text, `${reply.location}`) });
      expect([rotate.status, retire.status]).toEqual([400, 400]);
      expect(textOf(rotate.text)).toContain('has no client secret');
      expect(await repos.clients.getClient(clientId)).toEqual(stored);
    });

    it('keeps a server application (the form\'s default, and every application registered before) confidential, with its secret shown once', async () => {
      // Act
      const chosen = await postRegistration({ client_type: 'confidential', redirect_uris: 'https://server.example/callback' });
      const byDefault = await postRegistration({ redirect_uris: 'http://localhost:8080/callback' });

      // Assess
      for (const reply of [chosen, byDefault]) {
        expect(reply.location).toMatch(/^\/developer\/apps\/[0-9a-f-]{36}\/secret$/);
        const stored = await repos.clients.getClient(reply.location!.split('/')[3]!);
        expect(stored?.secretHash).toEqual(expect.any(String));
        expect(stored?.clientType).toBeUndefined();
      }
      expect(await repos.clients.getClient(DEMO_CLIENT.clientId)).not.toHaveProperty('clientType');
    });

    it.each([
      ['http://localhost:8080/callback', 'instead of localhost (RFC 8252 §8.3)'],
      ['com.example.app://callback', 'single slash'],
      ['myapp:/callback', 'reverse domain form'],
      ['http://192.168.1.20/callback', 'only on 127.0.0.1 or [::1]'],
    ])('refuses %s for a native or browser application, naming why, and registers nothing', async (uri, why) => {
      // Prepare
      const before = await repos.clients.listClientsByDeveloper(developer.id);

      // Act
      const reply = await postRegistration({ client_type: 'public', redirect_uris: uri });

      // Assess
      expect(reply.status).toBe(400);
      expect(textOf(reply.text)).toContain(`${uri}:`);
      expect(textOf(reply.text)).toContain(why);
      expect(await repos.clients.listClientsByDeveloper(developer.id)).toEqual(before);
    });

    it('refuses a kind of application that is neither, and registers nothing', async () => {
      // Prepare
      const before = await repos.clients.listClientsByDeveloper(developer.id);

      // Act
      const reply = await postRegistration({ client_type: 'implicit', redirect_uris: 'https://x.example/cb' });

      // Assess
      expect(reply.status).toBe(400);
      expect(textOf(reply.text)).toContain('Choose a server application or a native or browser application.');
      expect(await repos.clients.listClientsByDeveloper(developer.id)).toEqual(before);
    });
  });

  describe('a native application with oauth4webapi and a loopback redirect', () => {
    const listeners: Server[] = [];
    afterAll(async () => {
      for (const server of listeners) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    /** What a native app does to receive the redirect: listens on 127.0.0.1, on a port the system picks, for one request. */
    async function loopbackListener(): Promise<{ redirectUri: string; received: Promise<URL> }> {
      let deliver: (url: URL) => void;
      const received = new Promise<URL>((resolve) => {
        deliver = resolve;
      });
      const server = createServer((req, res) => {
        deliver(new URL(req.url ?? '/', `http://${req.headers.host}`));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('Signed in: you can close this window and go back to the app.');
      });
      listeners.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { redirectUri: `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`, received };
    }

    it('discovers that public clients are served: token_endpoint_auth_method none, PKCE S256', () => {
      expect(as.token_endpoint_auth_methods_supported).toContain('none');
      expect(as.revocation_endpoint_auth_methods_supported).toContain('none');
      expect(as.code_challenge_methods_supported).toEqual(['S256']);
    });

    it('signs in through the system browser to a loopback port of its own, exchanges the code without a secret, refreshes and revokes', async () => {
      // Prepare: registered with its loopback path only; the port is the one this launch of the app got.
      const clientId = await registerPublicApp(['http://127.0.0.1/callback']);
      const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
      const app = await loopbackListener();
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const authorizationUrl = new URL(as.authorization_endpoint!);
      authorizationUrl.search = new URLSearchParams({
        client_id: clientId, redirect_uri: app.redirectUri, response_type: 'code', scope: 'read_device', state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }).toString();

      // Act: the user's browser signs in and allows, and follows the redirect to the app's listener.
      const userBrowser = new Browser(service.authUrl);
      const redirect = await authorize(userBrowser, Object.fromEntries(authorizationUrl.searchParams), { account: ALICE });
      const arrived = await fetch(redirect);
      const callback = await app.received;
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, app.redirectUri, verifier, LOCAL_HTTP));
      const devices = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      const refreshed = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, LOCAL_HTTP));
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token!, LOCAL_HTTP));
      const afterRevocation = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, LOCAL_HTTP)).catch((error: unknown) => error);
      secrets.push(callback.searchParams.get('code')!, verifier, tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!);

      // Assess
      expect(`${redirect.origin}${redirect.pathname}`).toBe(app.redirectUri);
      expect(arrived.status).toBe(200);
      expect(callback.searchParams.get('iss')).toBe(service.authUrl);
      expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'read_device' });
      expect(devices.status).toBe(200);
      expect(((await devices.json()) as { id: string }[]).map((d) => d.id).sort()).toEqual(ALICE_DEVICES);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(afterRevocation).toBeInstanceOf(oauth.ResponseBodyError);
      expect(afterRevocation).toMatchObject({ error: 'invalid_grant', status: 400 });
    });

    it('asks the user again at the next launch, on another port, although the scopes were granted (RFC 8252 §8.6)', async () => {
      // Prepare
      const clientId = await registerPublicApp(['http://127.0.0.1/callback']);
      const first = await loopbackListener();
      await codeFor(clientId, first.redirectUri);
      const second = await loopbackListener();
      const user = new Browser(service.authUrl);
      expect((await signIn(user, ALICE)).status).toBe(303);
      const params = {
        response_type: 'code', client_id: clientId, redirect_uri: second.redirectUri, scope: 'read_device',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
      };

      // Act
      const page = await user.get(authorizePath(params));

      // Assess: the consent page, not a redirect with a code, even though Alice allowed this application a moment ago.
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Allow Native test app to access your account?');
      expect(textOf(page.text)).toContain('You already allowed it to');
      expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${new URL(second.redirectUri).origin}`);
    });

    it('allows the consent form to redirect to its private-use scheme (CSP form-action)', async () => {
      // Prepare
      const clientId = await registerPublicApp(['com.example.nativetest:/oauth/callback']);
      const user = new Browser(service.authUrl);
      expect((await signIn(user, ALICE)).status).toBe(303);
      const params = {
        response_type: 'code', client_id: clientId, redirect_uri: 'com.example.nativetest:/oauth/callback', scope: 'read_device',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
      };

      // Act
      const page = await user.get(authorizePath(params));
      const allowed = await user.postForm('/oauth/authorize', { ...formFields(page.text, '/oauth/authorize'), decision: 'allow' });

      // Assess
      expect(page.headers.get('content-security-policy')).toContain("form-action 'self' com.example.nativetest:");
      expect(allowed.status).toBe(303);
      expect(allowed.location).toMatch(/^com\.example\.nativetest:\/oauth\/callback\?code=[^&]+&iss=/);
    });
  });

  describe('refusals: a clear RFC error, and nothing written', () => {
    let clientId: string;
    const REDIRECT = 'http://127.0.0.1:41000/callback';
    beforeAll(async () => {
      clientId = await registerPublicApp(['http://127.0.0.1/callback']);
    });

    it('refuses an authorization request without PKCE with a redirect carrying invalid_request, before any sign-in, issuing no code', async () => {
      // Act
      const reply = await new Browser(service.authUrl).get(authorizePath({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'read_device', state: 'st' }));

      // Assess
      expect(reply.status).toBe(302);
      const location = new URL(reply.location!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'invalid_request', error_description: expect.stringContaining('code_challenge'), state: 'st', iss: service.authUrl,
      });
      expect(await grantItemsOf(clientId)).toEqual([]);
    });

    it.each([
      ['another path', 'http://127.0.0.1:41000/callback/other'],
      ['localhost for 127.0.0.1', 'http://localhost:41000/callback'],
      ['the other loopback address', 'http://[::1]:41000/callback'],
    ])('shows an error page, never a redirect, for a loopback URI with %s, issuing no code', async (_, redirectUri) => {
      // Act
      const reply = await new Browser(service.authUrl).get(authorizePath({
        response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read_device',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
      }), { accept: 'text/html' });

      // Assess
      expect(reply.status).toBe(400);
      expect(reply.location).toBeNull();
      expect(textOf(reply.text)).toContain('The redirect address in this request is not registered for this application.');
      expect(await grantItemsOf(clientId)).toEqual([]);
    });

    it('refuses, at the token endpoint, an unknown client, each client presenting the other type\'s credentials, and no verifier; the code stays unspent', async () => {
      // Prepare
      const { code, verifier } = await codeFor(clientId, REDIRECT);
      const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
      const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

      // Act
      const replies = {
        unknownClient: await tokenRequest({ ...exchange, client_id: 'no-such-client' }),
        publicWithSecret: await tokenRequest({ ...exchange, client_id: clientId, client_secret: 'a-secret-it-never-had' }),
        publicWithBasic: await tokenRequest(exchange, { authorization: basic(clientId, 'a-secret-it-never-had') }),
        confidentialWithoutSecret: await tokenRequest({ ...exchange, client_id: DEMO_CLIENT.clientId }),
        withoutVerifier: await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId }),
      };
      const bodies = Object.fromEntries(await Promise.all(Object.entries(replies).map(async ([name, reply]) => [name, await reply.json()] as const)));
      const afterwards = await tokenRequest({ ...exchange, client_id: clientId });

      // Assess
      expect(Object.fromEntries(Object.entries(replies).map(([name, reply]) => [name, reply.status]))).toEqual({
        unknownClient: 401, publicWithSecret: 401, publicWithBasic: 401, confidentialWithoutSecret: 400, withoutVerifier: 400,
      });
      expect(bodies).toEqual({
        unknownClient: { error: 'invalid_client', error_description: 'Client authentication failed.' },
        publicWithSecret: { error: 'invalid_client', error_description: expect.stringContaining('token_endpoint_auth_method none') },
        publicWithBasic: { error: 'invalid_client', error_description: expect.stringContaining('no client_secret nor HTTP Basic') },
        confidentialWithoutSecret: { error: 'invalid_request', error_description: expect.stringContaining('client_secret') },
        withoutVerifier: { error: 'invalid_grant', error_description: 'PKCE verification failed.' },
      });
      expect(replies.publicWithBasic.headers.get('www-authenticate')).toMatch(/^Basic /);
      for (const reply of Object.values(replies)) expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(afterwards.status).toBe(200);
      secrets.push(((await afterwards.json()) as { refresh_token: string }).refresh_token);
    });

    it('refuses a revocation by a public client with a secret, or by an unknown client, and keeps the token', async () => {
      // Prepare
      const { code, verifier } = await codeFor(clientId, REDIRECT);
      const issued = (await (await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: clientId })).json()) as { refresh_token: string };
      secrets.push(issued.refresh_token);
      const revoke = (fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/revoke`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: issued.refresh_token, ...fields }),
      });

      // Act
      const withSecret = await revoke({ client_id: clientId, client_secret: 'a-secret-it-never-had' });
      const unknown = await revoke({ client_id: 'no-such-client' });

      // Assess
      expect([withSecret.status, unknown.status]).toEqual([401, 401]);
      expect(await withSecret.json()).toMatchObject({ error: 'invalid_client' });
      const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: clientId });
      expect(refresh.status).toBe(200);
      secrets.push(((await refresh.json()) as { refresh_token: string }).refresh_token);
    });
  });

  describe('a browser application: a page of another origin in Chromium', () => {
    let browser: TestBrowser;
    let app: { origin: string; stop(): Promise<void> };
    let stranger: { origin: string; stop(): Promise<void> };
    let clientId: string;

    beforeAll(async () => {
      app = await startStaticApp(() => ({ authUrl: service.authUrl, apiUrl: service.apiUrl, clientId, redirectUri: `${app.origin}/callback` }));
      stranger = await startStaticApp(() => ({ authUrl: service.authUrl, apiUrl: service.apiUrl, clientId, redirectUri: `${app.origin}/callback` }));
      clientId = await registerPublicApp([`${app.origin}/callback`]);
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
      await app?.stop();
      await stranger?.stop();
    });

    it('runs the PKCE flow in the page, calls /devices with fetch, refreshes and revokes cross-origin, with no secret anywhere', async () => {
      // Prepare
      const { page } = browser;
      const tokenCalls: { body: string; authorization?: string }[] = [];
      page.on('request', (request) => {
        if (/\/oauth\/(token|revoke)$/.test(request.url()) && request.method() === 'POST') {
          tokenCalls.push({ body: request.postData() ?? '', authorization: request.headers().authorization });
        }
      });
      const source = await (await fetch(`${app.origin}/`)).text();
      const preflightsBefore = invoked.filter((fn) => fn === 'options-oauth-preflight').length;

      // Act
      await page.goto(`${app.origin}/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('E-mail address').fill(ALICE.user.email);
      await page.getByLabel('Password').fill(ALICE.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: /^Allow Native test app/ }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/callback');
      const result = JSON.parse(await page.locator('#result:not(:empty)').textContent() ?? '{}') as Record<string, unknown>;

      // Assess
      expect(result).toEqual({
        scope: 'read_device', devices: ALICE_DEVICES, refreshed: true, revoked: 200,
        afterRevocation: { status: 400, error: 'invalid_grant' },
      });
      // The refresh's quoted charset is no CORS-safelisted Content-Type: Chromium asked first.
      expect(invoked.filter((fn) => fn === 'options-oauth-preflight').length).toBeGreaterThan(preflightsBefore);
      expect(tokenCalls).toHaveLength(4);
      for (const call of tokenCalls) {
        expect(new URLSearchParams(call.body).get('client_id')).toBe(clientId);
        expect(call.body).not.toContain('client_secret');
        expect(call.authorization).toBeUndefined();
      }
      expect(source).not.toMatch(/secret/i);
      expect(await repos.clients.getClient(clientId)).not.toHaveProperty('secretHash');
    });

    it('registers a native or browser application with the console\'s form: its choice, no secret shown, axe clean and no sideways scroll at 390 px', async () => {
      // Prepare
      const { page } = browser;
      await browser.context.clearCookies();
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${service.authUrl}/developer`);
      await page.getByLabel('E-mail address').fill(ALICE.user.email);
      await page.getByLabel('Password').fill(ALICE.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Register an application' }).waitFor();
      const fitsWidth = () => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(await fitsWidth()).toBe(true);
      expect(await page.getByLabel('Server application', { exact: true }).isChecked()).toBe(true);

      // Act
      await page.getByLabel('Application name').fill('Chromium SPA');
      await page.getByLabel('Native or browser application', { exact: true }).check();
      await page.getByLabel('Website').fill('https://spa.example');
      await page.getByLabel('Redirect URIs (one per line)').fill('https://spa.example/callback\nhttp://127.0.0.1/callback');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('heading', { name: 'No client secret' }).waitFor();

      // Assess
      expect(new URL(page.url()).pathname).toMatch(/^\/developer\/apps\/[0-9a-f-]{36}$/);
      expect(await page.locator('#client-type').textContent()).toBe('Native or browser application.');
      expect(await page.locator('.secret').count()).toBe(0);
      expect(await accessibilityViolations(page)).toEqual([]);
      expect(await fitsWidth()).toBe(true);
      await page.setViewportSize({ width: 1000, height: 700 });
    });

    it('keeps the answers from a page of an origin the application did not register', async () => {
      // Prepare
      const { page } = browser;
      // Another host: any port of the registered loopback host 127.0.0.1 is the application's own (RFC 8252 §7.3, as redirect matching).
      await page.goto(`${stranger.origin.replace('127.0.0.1', 'localhost')}/idle`);

      // Act
      const outcome = await page.evaluate(async ({ authUrl, id }) => {
        try {
          await fetch(`${authUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: id }) });
          return 'read';
        } catch (error) {
          return `refused: ${(error as Error).name}`;
        }
      }, { authUrl: service.authUrl, id: clientId });

      // Assess
      expect(outcome).toBe('refused: TypeError');
    });
  });

  it('logs no code, verifier or token of these flows', () => {
    const output = captured.join('');
    expect(secrets.length).toBeGreaterThan(10);
    expect(output).toContain('"message":"request"');
    for (const secret of secrets) expect(output.includes(secret), `${secret.slice(0, 8)}… in the logs`).toBe(false);
  });
});

/**
 * A browser application's static files on 127.0.0.1 at a port of its own (another origin than the
 * service's hosts): one page that starts the code flow with PKCE, and, at /callback, finishes it in
 * the page (token request, GET /devices, a refresh, a revocation), writing what it read into
 * `#result`. It knows no secret: `config()` gives the hosts, the client id and the redirect URI.
 */
async function startStaticApp(config: () => Record<string, string>): Promise<{ origin: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Browser app</title></head>
<body><main><h1>Browser app</h1><pre id="result"></pre></main>
<script type="application/json" id="config">${JSON.stringify(config())}</script>
<script>${req.url?.startsWith('/idle') ? '' : APP_SCRIPT}</script></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The browser application's code: plain fetch and Web Crypto, as a single-page application without a library would write it. */
const APP_SCRIPT = `
const config = JSON.parse(document.getElementById('config').textContent);
const show = (value) => { document.getElementById('result').textContent = JSON.stringify(value); };
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const post = (path, fields, headers) => fetch(new URL(path, config.authUrl), {
  method: 'POST', headers, body: headers ? new URLSearchParams(fields).toString() : new URLSearchParams(fields),
});

async function start() {
  const verifier = random();
  const state = random();
  sessionStorage.setItem('flow', JSON.stringify({ verifier, state }));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const url = new URL('/oauth/authorize', config.authUrl);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: config.clientId, redirect_uri: config.redirectUri, scope: 'read_device', state,
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  location.assign(url);
}

async function callback() {
  const params = new URLSearchParams(location.search);
  const { verifier, state } = JSON.parse(sessionStorage.getItem('flow'));
  if (params.get('state') !== state || params.get('iss') !== config.authUrl) throw new Error('not our authorization');
  const tokens = await (await post('/oauth/token', {
    grant_type: 'authorization_code', code: params.get('code'), redirect_uri: config.redirectUri, client_id: config.clientId, code_verifier: verifier,
  })).json();
  const devices = await (await fetch(new URL('/devices', config.apiUrl), { headers: { authorization: 'Bearer ' + tokens.access_token } })).json();
  // A quoted charset is valid, but no CORS-safelisted Content-Type: this request is preflighted.
  const refreshed = await (await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: config.clientId },
    { 'content-type': 'application/x-www-form-urlencoded; charset="utf-8"' })).json();
  const revoked = await post('/oauth/revoke', { token: refreshed.refresh_token, client_id: config.clientId });
  const after = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token, client_id: config.clientId });
  show({
    scope: tokens.scope, devices: devices.map((d) => d.id).sort(), refreshed: typeof refreshed.access_token === 'string',
    revoked: revoked.status, afterRevocation: { status: after.status, error: (await after.json()).error },
  });
}

(location.pathname === '/callback' ? callback() : start()).catch((error) => show({ failed: String(error) }));
`;
