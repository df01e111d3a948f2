import { GetCommand, ScanCommand, UpdateCommand } from '#shared/data/commands';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_TV_CLIENT, DEMO_USERS } from '#local/seed';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { ALICE, Browser, createAccount, formFields, signIn, textOf, type Account } from '../support/oauth-client';
import { countRequests } from '../support/count-requests';
import { useTable, useTestService } from '../support/service';

// Devices without a browser (RFC 8628): an application that enables the device
// flow in the console gets a device code and a short user code; its user types the code at /device
// on another screen, signs in and decides, while the device polls the token endpoint. Shown with a
// maintained client library (openid-client's device authorization grant) polling while Chromium
// enters the code; the polling answers (pending, slow_down, expired, denied) with raw requests; and
// the refusals of bad input, each with nothing written.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const USER_CODE_SHAPE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const ALICE_DEVICES = DEMO_USERS[0].devices.map((d) => d.id).sort();

describe('device authorization grant (RFC 8628)', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  let developer: Browser;
  /** A native application (public) that uses the device flow and has no redirect URI. */
  let tvApp: string;
  /** A server application (confidential) that uses the device flow; its secret. */
  let hubApp: { clientId: string; secret: string };
  let browser: TestBrowser | undefined;

  beforeAll(async () => {
    const account = await createAccount(service);
    developer = new Browser(service.authUrl);
    expect((await signIn(developer, account)).status).toBe(303);
    tvApp = await register({ client_type: 'public', device_flow: 'on', redirect_uris: '' });
    hubApp = { clientId: await register({ client_type: 'confidential', device_flow: 'on', redirect_uris: 'https://hub.example/callback' }), secret: '' };
    const secretPage = await developer.get(`/developer/apps/${hubApp.clientId}/secret`);
    hubApp.secret = /<code[^>]*id="client-secret"[^>]*>([^<]+)<\/code>/.exec(secretPage.text)?.[1] ?? '';
    expect(hubApp.secret, 'the new secret is shown once').toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** Registers an application through the console's form; its client id. */
  async function register(fields: Record<string, string>): Promise<string> {
    const page = await developer.get('/developer');
    const reply = await developer.postForm('/developer/apps', {
      ...formFields(page.text, '/developer/apps'), name: `Living-room TV ${fields.client_type}`, description: 'Shows your home on the TV.', website: 'https://tv.example', ...fields,
    });
    expect(reply.status, textOf(reply.text).slice(0, 300)).toBe(303);
    return decodeURIComponent(/^\/developer\/apps\/([^/?]+)/.exec(reply.location ?? '')![1]!);
  }

  // The answers are checked member by member below.
  type Json = Record<string, any>;
  const json = async (reply: Response) => (await reply.json()) as Json;
  const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${service.authUrl}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields),
    });
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

  /** A device authorization of the TV application (raw request); its answer. */
  async function startTv(scope = 'read_device'): Promise<{ device_code: string; user_code: string; verification_uri_complete: string; interval: number }> {
    const reply = await post('/oauth/device_authorization', { client_id: tvApp, scope });
    expect(reply.status).toBe(200);
    return (await reply.json()) as Awaited<ReturnType<typeof startTv>>;
  }
  const poll = (deviceCode: string, clientId = tvApp) => post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

  /** Alice's HTTP browser, signed in, entering `userCode` at /device and deciding. */
  async function decide(userCode: string, decision: 'allow' | 'deny', account: Account = ALICE) {
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account, '/device')).status).toBe(303);
    const form = await b.get('/device');
    const consent = await b.postForm('/device', { ...formFields(form.text, '/device'), user_code: userCode });
    expect(consent.status, textOf(consent.text).slice(0, 300)).toBe(200);
    const done = await b.postForm('/device', { ...formFields(consent.text, '/device'), decision });
    return { b, consent, done };
  }

  /** Every item of the table, to compare before and after a refused request. */
  async function scanAll() {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.map((item) => JSON.stringify(item)).sort();
  }

  const familyOf = async (deviceCode: string) =>
    (await doc.send(new GetCommand({ TableName: service.tableName, Key: { pk: `FAMILY#${deviceCode.split('.')[0]}`, sk: 'FAMILY' }, ConsistentRead: true }))).Item;

  it('discovery names the device authorization endpoint and the grant type', async () => {
    const metadata = await json(await fetch(`${service.authUrl}/.well-known/oauth-authorization-server`));
    expect(metadata.device_authorization_endpoint).toBe(`${service.authUrl}/oauth/device_authorization`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
  });

  it('openid-client polls while Chromium enters the code: the device gets tokens that read the API and refresh', async () => {
    // Arrange: the device, with a maintained library, as a public client.
    const config = await client.discovery(new URL(service.authUrl), tvApp, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const started = await client.initiateDeviceAuthorization(config, { scope: 'read_device read_user' });
    expect(started.user_code).toMatch(USER_CODE_SHAPE);
    expect(started.verification_uri).toBe(`${service.authUrl}/device`);
    expect(started.verification_uri_complete).toBe(`${service.authUrl}/device?user_code=${started.user_code}`);
    expect(started).toMatchObject({ expires_in: 600, interval: 5 });
    const polling = client.pollDeviceAuthorizationGrant(config, started);

    // Act: the user, on a phone (390 px wide), follows verification_uri_complete.
    browser = await launchBrowser();
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(started.verification_uri_complete!);
    await page.getByLabel('E-mail address').fill(ALICE.user.email);
    await page.getByLabel('Password').fill(ALICE.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
    expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: /^Allow Living-room TV public on your device\?$/ }).waitFor();
    const consent = await page.locator('main').innerText();
    // The device has polled meanwhile, and heard authorization_pending: the poll wrote its next time.
    await expect.poll(async () => (await familyOf(started.device_code))?.nextPollAt, { timeout: 15_000, interval: 250 }).toBeDefined();
    expect(await familyOf(started.device_code)).toMatchObject({ status: 'device_pending' });
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    const tokens = await polling;

    // Assess
    expect(consent).toContain(started.user_code);
    expect(consent).toContain('See your devices, where they are and their state');
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'read_device read_user' });
    const devices = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(devices.status).toBe(200);
    expect(((await devices.json()) as { id: string }[]).map((d) => d.id).sort()).toEqual(ALICE_DEVICES);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // The user code is used up by the decision.
    const again = await decide(started.user_code, 'allow').catch((error: Error) => error);
    expect(String(again)).toContain('400');
  }, 60_000);

  it('a server application polls with its secret (HTTP Basic) and gets tokens once the user allows', async () => {
    const auth = { authorization: basic(hubApp.clientId, hubApp.secret) };
    const started = await json(await post('/oauth/device_authorization', { scope: 'read_device' }, auth));
    expect((await json(await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.device_code }, auth))).error).toBe('authorization_pending');
    await decide(started.user_code, 'allow');
    await doc.send(new UpdateCommand({ TableName: service.tableName, Key: { pk: `FAMILY#${started.device_code.split('.')[0]}`, sk: 'FAMILY' }, UpdateExpression: 'REMOVE nextPollAt' }));

    const reply = await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.device_code }, auth);

    expect(reply.status).toBe(200);
    expect(await reply.json()).toMatchObject({ token_type: 'Bearer', scope: 'read_device' });
    // Without its secret the same application is refused: it is a server application.
    const started2 = await json(await post('/oauth/device_authorization', { scope: 'read_device' }, auth));
    const bare = await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: started2.device_code, client_id: hubApp.clientId });
    expect(bare.status).toBe(400);
    expect((await json(bare)).error).toBe('invalid_request');
  });

  it('the console turns the flow on and off: an application that turned it off gets unauthorized_client', async () => {
    const clientId = await register({ client_type: 'public', device_flow: 'on', redirect_uris: '' });
    const path = `/developer/apps/${clientId}`;
    const page = await developer.get(path);
    expect(page.text).toMatch(/<input type="checkbox" name="device_flow" checked/);
    expect((await post('/oauth/device_authorization', { client_id: clientId, scope: 'read_device' })).status).toBe(200);

    // Unchecked, the box is not sent: the edit turns the flow off (and, with no redirect URI left, is refused).
    const { device_flow: _checked, ...unchecked } = formFields(page.text, path);
    expect(_checked).toBe('on');
    const refused = await developer.postForm(path, { ...unchecked, name: 'Living-room TV public', description: '', website: 'https://tv.example', redirect_uris: '' });
    expect(refused.status).toBe(400);
    const saved = await developer.postForm(path, { ...unchecked, name: 'Living-room TV public', description: '', website: 'https://tv.example', redirect_uris: 'http://127.0.0.1/callback' });
    expect(saved.status).toBe(303);

    const reply = await post('/oauth/device_authorization', { client_id: clientId, scope: 'read_device' });
    expect(reply.status).toBe(400);
    expect(await json(reply)).toMatchObject({ error: 'unauthorized_client' });
    expect((await developer.get(path)).text).not.toMatch(/name="device_flow" checked/);
  });

  it('the demo data has a TV application that uses the flow (the README\'s walk-through)', async () => {
    const reply = await post('/oauth/device_authorization', { client_id: DEMO_TV_CLIENT.clientId, scope: 'read_device' });
    expect(reply.status).toBe(200);
    expect((await json(reply)).user_code).toMatch(USER_CODE_SHAPE);
  });

  describe('polling', () => {
    it('answers authorization_pending with one DynamoDB request, then slow_down to a poll within the interval, and the interval grows by 5 s', async () => {
      const started = await startTv();
      const runtime = await import('#shared/runtime');
      const requests = countRequests(runtime.doc, { api: 'auth' });
      try {
        const first = await poll(started.device_code);
        expect(requests.operations).toEqual(['UpdateItemCommand']);
        const second = await poll(started.device_code);

        expect(first.status).toBe(400);
        expect(await first.json()).toMatchObject({ error: 'authorization_pending' });
        expect(second.status).toBe(400);
        const slow = await json(second);
        expect(slow.error).toBe('slow_down');
        expect(slow.error_description).toContain('10 seconds');
        expect(second.headers.get('cache-control')).toBe('no-store');
        expect(await familyOf(started.device_code)).toMatchObject({ status: 'device_pending', intervalMs: 10_000 });
      } finally {
        requests.detach();
      }
    });

    it('answers access_denied once the user denied, and the code cannot be entered again', async () => {
      const started = await startTv();
      const { done, b } = await decide(started.user_code.toLowerCase().replace('-', ' '), 'deny');
      expect(done.status).toBe(200);
      expect(textOf(done.text)).toContain('Request denied');

      const reply = await poll(started.device_code);

      expect(reply.status).toBe(400);
      expect(await reply.json()).toMatchObject({ error: 'access_denied' });
      const again = await b.postForm('/device', { ...formFields((await b.get('/device')).text, '/device'), user_code: started.user_code });
      expect(again.status).toBe(400);
    });

    it('answers expired_token once the code expired, and writes nothing', async () => {
      const started = await startTv();
      await doc.send(new UpdateCommand({
        TableName: service.tableName, Key: { pk: `FAMILY#${started.device_code.split('.')[0]}`, sk: 'FAMILY' },
        UpdateExpression: 'SET expiresAt = :past', ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }));
      const before = await scanAll();

      const reply = await poll(started.device_code);

      expect(reply.status).toBe(400);
      expect(await reply.json()).toMatchObject({ error: 'expired_token' });
      expect(await scanAll()).toEqual(before);
    });

    it('a device code presented again after it gave tokens is refused, and revokes them', async () => {
      const started = await startTv();
      await decide(started.user_code, 'allow');
      const tokens = await json(await poll(started.device_code));
      expect(tokens.refresh_token).toBeDefined();

      const replay = await poll(started.device_code);

      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
      expect(await familyOf(started.device_code)).toMatchObject({ status: 'revoked', revokedReason: 'code_replay' });
      const refresh = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tvApp });
      expect((await json(refresh)).error).toBe('invalid_grant');
    });

    it('a permission withdrawn between the approval and the poll gives no tokens', async () => {
      const account = await createAccount(service);
      const started = await startTv();
      const { b } = await decide(started.user_code, 'allow', account);
      const accountPage = await b.get('/account');
      expect((await b.postForm(`/account/apps/${tvApp}/revoke`, formFields(accountPage.text, `/account/apps/${tvApp}/revoke`))).status).toBe(303);

      const reply = await poll(started.device_code);

      expect(reply.status).toBe(400);
      expect(await reply.json()).toMatchObject({ error: 'invalid_grant' });
    });
  });

  describe('the device page', () => {
    it('sends a signed-out browser to sign in and back, the code kept', async () => {
      const b = new Browser(service.authUrl);
      const reply = await b.get('/device?user_code=BCDF-GHJK');
      expect(reply.status).toBe(302);
      expect(new URL(reply.location!, service.authUrl).searchParams.get('return_to')).toBe('/device?user_code=BCDF-GHJK');
    });

    it('counts every entry atomically: of 30 parallel wrong codes exactly 20 are looked up, the rest answer 429', async () => {
      const account = await createAccount(service);
      const b = new Browser(service.authUrl);
      expect((await signIn(b, account, '/device')).status).toBe(303);
      const fields = formFields((await b.get('/device')).text, '/device');

      const replies = await Promise.all(Array.from({ length: 30 }, () => b.postForm('/device', { ...fields, user_code: 'BCDF-GHJK' })));

      const statuses = replies.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 400)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
      // The right code is refused too now: the limit counts entries, not failures.
      const started = await startTv();
      expect((await b.postForm('/device', { ...fields, user_code: started.user_code })).status).toBe(429);
    });

    it('refuses a malformed code before counting or reading anything, and a forged form', async () => {
      const account = await createAccount(service);
      const b = new Browser(service.authUrl);
      expect((await signIn(b, account, '/device')).status).toBe(303);
      const fields = formFields((await b.get('/device')).text, '/device');
      const before = await scanAll();

      const malformed = await b.postForm('/device', { ...fields, user_code: 'AEIO-U123' });
      const forged = await b.postForm('/device', { ...fields, csrf: 'forged', user_code: 'BCDF-GHJK' });

      expect(malformed.status).toBe(400);
      expect(textOf(malformed.text)).toContain('That is not a device code');
      expect(forged.status).toBe(403);
      expect(await scanAll()).toEqual(before);
    });
  });

  describe('bad input', () => {
    it.each([
      ['an unknown client', { client_id: 'no-such-client', scope: 'read_device' }, {}, 401, 'invalid_client'],
      ['an application without the device flow', { scope: 'read_device' }, { authorization: basic(DEMO_CLIENT.clientId, DEMO_CLIENT.clientSecret) }, 400, 'unauthorized_client'],
      ['no scope', { client_id: 'TV' }, {}, 400, 'invalid_scope'],
      ['an unknown scope', { client_id: 'TV', scope: 'read_device open_door' }, {}, 400, 'invalid_scope'],
      ['a public client sending a secret', { client_id: 'TV', client_secret: 'guess', scope: 'read_device' }, {}, 401, 'invalid_client'],
    ])('device authorization with %s: refused, nothing written', async (_, fields, headers, status, error) => {
      const before = await scanAll();
      const form = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v === 'TV' ? tvApp : v]));

      const reply = await post('/oauth/device_authorization', form, headers);

      expect(reply.status).toBe(status);
      expect((await json(reply)).error).toBe(error);
      expect(await scanAll()).toEqual(before);
    });

    it('polls with a malformed code, another client\'s code, or an unknown client: clear errors, nothing written', async () => {
      const started = await startTv();
      const before = await scanAll();

      const malformed = await poll('not-a-device-code');
      const otherClient = await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.device_code }, { authorization: basic(hubApp.clientId, hubApp.secret) });
      const unknownClient = await poll(started.device_code, 'no-such-client');
      const missing = await post('/oauth/token', { grant_type: DEVICE_GRANT, client_id: tvApp });

      expect([malformed.status, (await json(malformed)).error]).toEqual([400, 'invalid_grant']);
      expect([otherClient.status, (await json(otherClient)).error]).toEqual([400, 'invalid_grant']);
      expect([unknownClient.status, (await json(unknownClient)).error]).toEqual([401, 'invalid_client']);
      expect(unknownClient.headers.get('www-authenticate')).toBe('Basic realm="oauth"');
      expect([missing.status, (await json(missing)).error]).toEqual([400, 'invalid_request']);
      expect(await scanAll()).toEqual(before);
    });

    it('deleting the application ends its device authorizations still waiting', async () => {
      const clientId = await register({ client_type: 'public', device_flow: 'on', redirect_uris: '' });
      const started = await json(await post('/oauth/device_authorization', { client_id: clientId, scope: 'read_device' }));
      const page = await developer.get(`/developer/apps/${clientId}/delete`);
      const deleted = await developer.postForm(`/developer/apps/${clientId}/delete`, { ...formFields(page.text, `/developer/apps/${clientId}/delete`), confirm_name: 'Living-room TV public' });
      expect(deleted.status).toBe(303);

      expect(await familyOf(started.device_code)).toMatchObject({ status: 'revoked' });
      const reply = await poll(started.device_code, clientId);
      expect(reply.status).toBe(401);
    });
  });
});
