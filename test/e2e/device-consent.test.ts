import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_TV_CLIENT } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import type { Device } from '#shared/domain/device';
import { formatTimestamp } from '#shared/domain/time';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { countRequests } from '../support/count-requests';
import { Browser, createAccount, formFields, signIn, textOf, type Account } from '../support/oauth-client';
import { tokenFor, useTable, useTestService } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

// Owners in control: at consent the user chooses which devices an
// application sees (and whether devices added later are shared); the resource API answers only
// those, in one request per call, and device webhooks stay silent for the others. On the account
// page the user sees each application's grant and changes its scopes and devices; the application
// hears of it with grant.updated. Shown over HTTP (the forms as a browser sends them), in Chromium
// (the consent and the grant page at 390 and 1280 px), and with the refusals of forged input.

const TIME_SCALE = 1e-4;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

describe('per-device consent and managing a grant', () => {
  const service = useTestService({ webhooks: { timeScale: TIME_SCALE } });
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  const devicesRepo = createDeviceRepo({ doc, table: service.tableName });
  const stops: (() => Promise<void>)[] = [];
  let browser: TestBrowser | undefined;

  afterAll(async () => {
    await browser?.close();
    for (const stop of stops) await stop();
  });

  /** A new user with `count` devices of their own. */
  async function owner(count: number): Promise<Account & { devices: Device[] }> {
    const account = await createAccount(service);
    const devices: Device[] = Array.from({ length: count }, (_, i) => ({
      id: randomUUID(), name: `Device ${i}`, place: i % 2 ? 'Kitchen' : 'Hall', version: '2.4.1', last_connection: formatTimestamp(new Date()),
      active: false, connected: true, sound: true, latitude: 48.85, longitude: 2.35, reference: `ref${i}`,
    } as Device));
    for (const device of devices) await devicesRepo.createDevice(account.user.id, device);
    return { ...account, devices };
  }

  const post = (path: string, fields: Record<string, string>) => fetch(`${service.authUrl}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields),
  });
  // The answers are checked member by member.
  const json = async (reply: Response) => (await reply.json()) as Record<string, any>;

  /**
   * The demo TV asks for `scope`; `account` enters the code over HTTP, changes the form with `edit`
   * (the consent page's fields, as a browser would send them), and allows; the TV's tokens.
   */
  async function connectTv(account: Account, scope: string, edit: (fields: Record<string, string>) => Record<string, string>) {
    const started = await json(await post('/oauth/device_authorization', { client_id: DEMO_TV_CLIENT.clientId, scope }));
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account, '/device')).status).toBe(303);
    const consent = await b.postForm('/device', { ...formFields((await b.get('/device')).text, '/device'), user_code: started.user_code });
    expect(consent.status).toBe(200);
    const decided = await b.postForm('/device', { ...edit(formFields(consent.text, '/device')), decision: 'allow' });
    expect(decided.status, textOf(decided.text).slice(0, 300)).toBe(200);
    const tokens = await json(await post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: DEMO_TV_CLIENT.clientId }));
    expect(tokens.access_token).toBeDefined();
    return { b, consentPage: consent.text, tokens: tokens as { access_token: string; refresh_token: string; scope: string } };
  }

  const api = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${service.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
  const consentOf = async (userId: string) => (await doc.send(new GetCommand({
    TableName: service.tableName, Key: { pk: `USER#${userId}`, sk: `CONSENT#${DEMO_TV_CLIENT.clientId}` }, ConsistentRead: true,
  }))).Item;

  describe('the choice at consent', () => {
    it('lists every device checked, and records only the chosen ones: the API answers only those, each call one request', async () => {
      const alice = await owner(3);
      const [kept, hidden, alsoKept] = alice.devices;
      const { consentPage, tokens } = await connectTv(alice, 'read_device write_device', (fields) => {
        expect(Object.keys(fields).filter((name) => name.startsWith('device_')).sort()).toEqual(alice.devices.map((d) => `device_${d.id}`).sort());
        expect(fields.share_later).toBe('on');
        const { [`device_${hidden!.id}`]: _hidden, share_later: _later, ...rest } = fields;
        return { ...rest, devices: 'chosen' };
      });
      expect(textOf(consentPage)).toContain('Device 1 (Kitchen)');
      const recorded = await consentOf(alice.user.id);
      expect([...(recorded!.onlyDevices as string[])].sort()).toEqual([kept!.id, alsoKept!.id].sort());
      expect(recorded).not.toHaveProperty('exceptDevices');
      const runtime = await import('#shared/runtime');
      const requests = countRequests(runtime.doc, { api: 'resource' });
      try {
        const list = await api(tokens.access_token, '/devices');
        expect(requests.total).toBe(1);
        const seen = ((await list.json()) as Device[]).map((d) => d.id).sort();
        expect(seen).toEqual([kept!.id, alsoKept!.id].sort());

        requests.reset();
        const theirs = await api(tokens.access_token, `/devices/${hidden!.id}`);
        const missing = await api(tokens.access_token, `/devices/${randomUUID()}`);
        expect(requests.total).toBe(2);
        expect(theirs.status).toBe(404);
        expect(await theirs.text()).toBe(await missing.text());

        requests.reset();
        const put = await api(tokens.access_token, `/devices/${hidden!.id}`, { method: 'PUT', body: JSON.stringify({ name: 'Hijacked' }) });
        expect(requests.total).toBe(1);
        expect(put.status).toBe(404);
        expect((await devicesRepo.getOwnedDevice(alice.user.id, hidden!.id))!.name).toBe('Device 1');
        const allowed = await api(tokens.access_token, `/devices/${kept!.id}`, { method: 'PUT', body: JSON.stringify({ name: 'Renamed' }) });
        expect(allowed.status).toBe(204);
      } finally {
        requests.detach();
      }
      // Not sharing later devices: one added now stays unseen.
      const late = { ...kept!, id: randomUUID(), name: 'Added later' };
      await devicesRepo.createDevice(alice.user.id, late);
      expect(((await (await api(tokens.access_token, '/devices')).json()) as Device[]).map((d) => d.id)).not.toContain(late.id);
    });

    it('sharing devices added later records only those left out, and a later device is seen', async () => {
      const bob = await owner(2);
      const { tokens } = await connectTv(bob, 'read_device', (fields) => {
        const { [`device_${bob.devices[0]!.id}`]: _left, ...rest } = fields;
        return { ...rest, devices: 'chosen' };
      });
      expect(await consentOf(bob.user.id)).toMatchObject({ exceptDevices: [bob.devices[0]!.id] });
      const late = { ...bob.devices[1]!, id: randomUUID(), name: 'Added later' };
      await devicesRepo.createDevice(bob.user.id, late);
      const seen = ((await (await api(tokens.access_token, '/devices')).json()) as Device[]).map((d) => d.id).sort();
      expect(seen).toEqual([bob.devices[1]!.id, late.id].sort());
    });

    it('refuses a device that is not the user\'s in the consent form: 400, nothing written', async () => {
      const carol = await owner(1);
      const stranger = await owner(1);
      const started = await json(await post('/oauth/device_authorization', { client_id: DEMO_TV_CLIENT.clientId, scope: 'read_device' }));
      const b = new Browser(service.authUrl);
      expect((await signIn(b, carol, '/device')).status).toBe(303);
      const consent = await b.postForm('/device', { ...formFields((await b.get('/device')).text, '/device'), user_code: started.user_code });
      const before = await scan();

      const forged = await b.postForm('/device', { ...formFields(consent.text, '/device'), [`device_${stranger.devices[0]!.id}`]: 'on', decision: 'allow' });

      expect(forged.status).toBe(400);
      expect(textOf(forged.text)).toContain('is not one of your devices');
      // The entry was counted (each decision is), and nothing else changed.
      expect((await scan()).filter((item) => !item.startsWith('{"pk":"USERCODEENTRIES#'))).toEqual(before.filter((item) => !item.startsWith('{"pk":"USERCODEENTRIES#')));
    });
  });

  async function scan() {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.map((item) => JSON.stringify(Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a === 'pk' ? -1 : b === 'pk' ? 1 : a.localeCompare(b)))))).sort();
  }

  it('webhooks stay silent for a device the application does not see, and speak for one it sees', async () => {
    const dana = await owner(2);
    const [seen, unseen] = dana.devices;
    await connectTv(dana, 'read_device', (fields) => {
      const { [`device_${unseen!.id}`]: _unseen, ...rest } = fields;
      return { ...rest, devices: 'chosen' };
    });
    const hook = await startReceiver();
    stops.push(hook.stop);
    await webhooks.setUrl(DEMO_TV_CLIENT.clientId, hook.url);
    try {
      const token = await tokenFor(service, dana.user.id, ['write_device'], { clientId: 'another-app' });
      const rename = (id: string, name: string) => api(token, `/devices/${id}`, { method: 'PUT', body: JSON.stringify({ name }) });
      expect((await rename(unseen!.id, 'Secret room')).status).toBe(204);
      expect((await rename(seen!.id, 'Open room')).status).toBe(204);

      const got = await hook.next((r) => r.body.includes('Open room'), 20_000);
      expect(JSON.parse(got.body)).toMatchObject({ type: 'device.updated', data: { device_id: seen!.id } });
      // Deliveries are made in order of the stream: the unseen device's rename came first, and made none.
      expect(hook.received.some((r) => r.body.includes('Secret room') || r.body.includes(unseen!.id))).toBe(false);
    } finally {
      await webhooks.removeSubscription(DEMO_TV_CLIENT.clientId);
    }
  });

  describe('the grant page', () => {
    it('takes a scope away and changes the devices: the next refresh answers the rest, the API hides the device at once, the application hears grant.updated', async () => {
      const erin = await owner(2);
      const { b, tokens } = await connectTv(erin, 'read_device read_user', (fields) => fields);
      const hook = await startReceiver();
      stops.push(hook.stop);
      await webhooks.setUrl(DEMO_TV_CLIENT.clientId, hook.url);
      try {
        const path = `/account/apps/${DEMO_TV_CLIENT.clientId}`;
        const account = await b.get('/account');
        expect(account.text).toContain(`href="${path}"`);
        const page = await b.get(path);
        expect(page.status).toBe(200);
        expect(textOf(page.text)).toContain('Last used on');
        const { scope_read_user: _dropped, [`device_${erin.devices[1]!.id}`]: _hidden, ...shown } = formFields(page.text, path);
        const fields = { ...shown, devices: 'chosen' };

        const saved = await b.postForm(path, fields);

        expect(saved.status).toBe(303);
        expect(await consentOf(erin.user.id)).toMatchObject({ scopes: ['read_device'], exceptDevices: [erin.devices[1]!.id], revision: 1 });
        const seen = ((await (await api(tokens.access_token, '/devices')).json()) as Device[]).map((d) => d.id);
        expect(seen).toEqual([erin.devices[0]!.id]);
        const refreshed = await json(await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: DEMO_TV_CLIENT.clientId }));
        expect(refreshed.scope).toBe('read_device');
        const event = JSON.parse((await hook.next((r) => r.body.includes('grant.updated') && r.body.includes(erin.user.id), 20_000)).body);
        expect(event.data).toEqual({ user_id: erin.user.id, client_id: DEMO_TV_CLIENT.clientId, scopes: ['read_device'], changed: ['scopes', 'devices'] });
        expect(JSON.stringify(event)).not.toContain(erin.devices[1]!.id);

        // The same form again (a replay), or one forged without its CSRF token, changes nothing.
        const before = await consentOf(erin.user.id);
        const replayed = await b.postForm(path, fields);
        const forged = await b.postForm(path, { ...fields, csrf: 'forged', revision: '1' });
        const { scope_read_device: _last, ...noScope } = formFields((await b.get(path)).text, path);
        const none = await b.postForm(path, noScope);
        expect(replayed.status).toBe(409);
        expect(forged.status).toBe(403);
        expect(none.status).toBe(400);
        expect(await consentOf(erin.user.id)).toEqual(before);
      } finally {
        await webhooks.removeSubscription(DEMO_TV_CLIENT.clientId);
      }
    });

    it('answers 404 for an application the user has not authorized, and a device of another user in the form is refused', async () => {
      const frank = await owner(1);
      const stranger = await owner(1);
      const { b } = await connectTv(frank, 'read_device', (fields) => fields);
      const path = `/account/apps/${DEMO_TV_CLIENT.clientId}`;
      expect((await b.get('/account/apps/demo-client')).status).toBe(404);
      const before = await consentOf(frank.user.id);

      const forged = await b.postForm(path, { ...formFields((await b.get(path)).text, path), [`device_${stranger.devices[0]!.id}`]: 'on' });

      expect(forged.status).toBe(400);
      expect(await consentOf(frank.user.id)).toEqual(before);
    });
  });

  it('in Chromium: the device choice at /device and the grant page, accessible at 390 and 1280 px', async () => {
    const gina = await owner(2);
    const started = await json(await post('/oauth/device_authorization', { client_id: DEMO_TV_CLIENT.clientId, scope: 'read_device' }));
    browser = await launchBrowser();
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(started.verification_uri_complete);
    await page.getByLabel('E-mail address').fill(gina.user.email);
    await page.getByLabel('Password').fill(gina.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('group', { name: /Devices .* may see/ }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('radio', { name: 'Only the devices checked below' }).check();
    await page.getByText('Your devices (2)').click();
    await page.getByRole('checkbox', { name: 'Device 1 (Kitchen)' }).uncheck();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    expect(await consentOf(gina.user.id)).toMatchObject({ exceptDevices: [gina.devices[1]!.id] });

    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${service.authUrl}/account`);
      await page.getByRole('link', { name: `Change what ${'Living-room TV (demo)'} may do` }).click();
      await page.getByRole('heading', { name: 'Living-room TV (demo)' }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    }
    await page.getByRole('checkbox', { name: 'Device 1 (Kitchen)' }).check();
    await page.getByRole('checkbox', { name: 'Device 0 (Hall)' }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Living-room TV (demo)' }).waitFor();
    expect(await consentOf(gina.user.id)).toMatchObject({ exceptDevices: [gina.devices[0]!.id], revision: 1 });
  }, 60_000);

  it('access tokens do not grow with the devices: the same size at 1, 50 and 500 devices, one chosen', async () => {
    const sizes: number[] = [];
    for (const count of [1, 50, 500]) {
      const user = await owner(count);
      const { tokens } = await connectTv(user, 'read_device', (fields) => {
        const rest = Object.fromEntries(Object.entries(fields).filter(([name]) => !name.startsWith('device_') && name !== 'share_later'));
        return { ...rest, devices: 'chosen', [`device_${user.devices[0]!.id}`]: 'on' };
      });
      sizes.push(tokens.access_token.length);
      const seen = (await (await api(tokens.access_token, '/devices')).json()) as Device[];
      expect(seen.map((d) => d.id)).toEqual([user.devices[0]!.id]);
    }
    // The claims differ only in their ids and times, whose lengths are fixed.
    expect(new Set(sizes).size).toBe(1);
    expect(sizes[0]).toBeLessThan(1000);
  }, 120_000);
});
