import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_TV_CLIENT } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import type { Device } from '#shared/domain/device';
import { formatTimestamp } from '#shared/domain/time';
import { MAX_FORM_BYTES } from '#shared/http/form';
import { DEVICE_CHOICE_FORM_BYTES, DEVICE_FIELD_BYTES } from '#shared/pages/device-choice';
import { accessibilityViolations, DESKTOP, launchBrowser, PHONE, type TestBrowser } from '../support/browser';
import { type Account, authorizationParams, authorizePath, Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { loosenAuthStorageLimit, useTable, useTestService } from '../support/service';

// An owner with a thousand devices (the design promises hundreds) allows an application and edits
// its grant: the consent page at /oauth/authorize, the device page at /device and the grant page
// list every device; the forms a browser sends (a checkbox per device, well past the 16 KiB of a
// page form) are accepted, "all my devices" names none, and the limit still holds a form to what
// the owner's devices justify. Over HTTP, then in Chromium at 390 and 1280 px with axe.

const COUNT = 1000;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const deviceFields = (fields: Record<string, string>) => Object.keys(fields).filter((name) => name.startsWith('device_'));

describe('an owner with 1,000 devices', () => {
  const service = useTestService();
  const { doc, repos: { grants } } = useTable(service, { requestTimeoutMs: 20_000 });
  const devicesRepo = createDeviceRepo({ doc, table: service.tableName });
  let browser: TestBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  /** A new user with `count` devices of their own, written 10 at a time (DynamoDB Local on a busy machine). */
  async function owner(count: number): Promise<Account & { devices: Device[] }> {
    const account = await createAccount(service);
    const devices = Array.from({ length: count }, (_, i) => ({
      id: randomUUID(), name: `Device ${i}`, place: i % 2 ? 'Kitchen' : 'Hall', version: '2.4.1', last_connection: formatTimestamp(new Date()),
      active: false, connected: true, sound: true, latitude: 48.85, longitude: 2.35, reference: `ref${i}`,
    } as Device));
    for (let i = 0; i < devices.length; i += 10) await Promise.all(devices.slice(i, i + 10).map((d) => devicesRepo.createDevice(account.user.id, d)));
    return { ...account, devices };
  }

  let many: Account & { devices: Device[] };
  let b: Browser;
  beforeAll(async () => {
    // A Query of 1,000 devices can keep DynamoDB Local past the service's 1 s while other files load the machine.
    await loosenAuthStorageLimit();
    many = await owner(COUNT);
    b = new Browser(service.authUrl);
    expect((await signIn(b, many)).status).toBe(303);
    // The grant each test starts from (whatever another test did): the application may read the devices, all of them.
    await grants.saveConsent({
      userId: many.user.id, clientId: DEMO_CLIENT.clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()), grantGeneration: randomUUID(),
    });
  }, 180_000);

  const consentOf = async (userId: string, clientId: string) => (await doc.send(new GetCommand({
    TableName: service.tableName, Key: { pk: `USER#${userId}`, sk: `CONSENT#${clientId}` }, ConsistentRead: true,
  }))).Item;
  async function scan(): Promise<string[]> {
    const items: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) items.push(JSON.stringify(Object.fromEntries(Object.entries(item).sort(([x], [y]) => x.localeCompare(y)))));
      start = page.LastEvaluatedKey;
    } while (start);
    return items.sort();
  }
  const bytes = (fields: Record<string, string>) => new URLSearchParams(fields).toString().length;

  it('allows an application at /oauth/authorize: every device listed, the browser\'s form of 1,000 checked boxes accepted, then all but one chosen', async () => {
    const page = await b.get(authorizePath(authorizationParams({ scope: 'read_device write_device' })));
    expect(page.status).toBe(200);
    const fields = formFields(page.text, '/oauth/authorize');
    expect(deviceFields(fields)).toHaveLength(COUNT);
    expect(bytes({ ...fields, decision: 'allow' })).toBeGreaterThan(MAX_FORM_BYTES);

    const allowed = await b.postForm('/oauth/authorize', { ...fields, decision: 'allow' });

    expect(allowed.status, textOf(allowed.text).slice(0, 200)).toBe(303);
    expect(fields.devices).toBe('all');
    expect(new URL(allowed.location!).searchParams.get('code')).toBeTruthy();
    const all = await consentOf(many.user.id, DEMO_CLIENT.clientId);
    expect(all).not.toHaveProperty('onlyDevices');
    expect(all).not.toHaveProperty('exceptDevices');

    // A new scope asks again: this time every device but one, and those added later.
    const again = await b.get(authorizePath(authorizationParams({ scope: 'read_device read_user' })));
    const left = many.devices[700]!;
    const { [`device_${left.id}`]: _left, ...rest } = formFields(again.text, '/oauth/authorize');
    const chosen = await b.postForm('/oauth/authorize', { ...rest, devices: 'chosen', decision: 'allow' });
    expect(chosen.status, textOf(chosen.text).slice(0, 200)).toBe(303);
    expect(await consentOf(many.user.id, DEMO_CLIENT.clientId)).toMatchObject({ scopes: ['read_device', 'write_device', 'read_user'], exceptDevices: [left.id] });
  }, 120_000);

  it('edits the grant on the account page: 1,000 devices listed, 500 kept, those added later not shared', async () => {
    const path = `/account/apps/${DEMO_CLIENT.clientId}`;
    const page = await b.get(path);
    expect(page.status).toBe(200);
    const fields = formFields(page.text, path);
    const dropped = new Set(many.devices.slice(500).map((d) => `device_${d.id}`));
    const kept = Object.fromEntries(Object.entries(fields).filter(([name]) => !dropped.has(name) && name !== 'share_later'));

    const saved = await b.postForm(path, { ...kept, devices: 'chosen' });

    expect(saved.status, textOf(saved.text).slice(0, 200)).toBe(303);
    expect(page.text.match(/ name="device_[0-9a-f-]{36}"/g)).toHaveLength(COUNT);
    const consent = await consentOf(many.user.id, DEMO_CLIENT.clientId);
    expect(consent).not.toHaveProperty('exceptDevices');
    expect([...(consent!.onlyDevices as string[])].sort()).toEqual(many.devices.slice(0, 500).map((d) => d.id).sort());

    // "All my devices" names none: the mode alone, from the same page.
    const shown = formFields((await b.get(path)).text, path);
    const compact = Object.fromEntries(Object.entries(shown).filter(([name]) => !name.startsWith('device_')));
    const all = await b.postForm(path, { ...compact, devices: 'all' });
    expect(all.status).toBe(303);
    const everyDevice = await consentOf(many.user.id, DEMO_CLIENT.clientId);
    expect(everyDevice!.revision).toBe(consent!.revision + 1);
    expect(everyDevice).not.toHaveProperty('onlyDevices');
    expect(everyDevice).not.toHaveProperty('exceptDevices');
  }, 120_000);

  it('allows a device at /device with every device but one', async () => {
    const started = (await (await fetch(`${service.authUrl}/oauth/device_authorization`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: DEMO_TV_CLIENT.clientId, scope: 'read_device' }),
    })).json()) as { user_code: string; device_code: string };
    const consent = await b.postForm('/device', { ...formFields((await b.get('/device')).text, '/device'), user_code: started.user_code });
    const fields = formFields(consent.text, '/device');
    expect(deviceFields(fields)).toHaveLength(COUNT);
    const { [`device_${many.devices[3]!.id}`]: _left, ...rest } = fields;

    const decided = await b.postForm('/device', { ...rest, devices: 'chosen', decision: 'allow' });

    expect(decided.status, textOf(decided.text).slice(0, 200)).toBe(200);
    expect(textOf(decided.text)).toContain('Device connected');
    expect(await consentOf(many.user.id, DEMO_TV_CLIENT.clientId)).toMatchObject({ exceptDevices: [many.devices[3]!.id] });
    const tokens = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: DEMO_TV_CLIENT.clientId }),
    });
    expect(tokens.status).toBe(200);
  }, 120_000);

  it('refuses forged, foreign and oversized forms with a clear error, writing nothing', async () => {
    const path = `/account/apps/${DEMO_CLIENT.clientId}`;
    const fields: Record<string, string> = { ...formFields((await b.get(path)).text, path), devices: 'chosen' };
    const stranger = await owner(2);
    const strangerBrowser = new Browser(service.authUrl);
    expect((await signIn(strangerBrowser, stranger)).status).toBe(303);
    expect((await strangerBrowser.postForm('/oauth/authorize', {
      ...formFields((await strangerBrowser.get(authorizePath(authorizationParams({ scope: 'read_device' })))).text, '/oauth/authorize'), decision: 'allow',
    })).status).toBe(303);
    const strangerPath = `/account/apps/${DEMO_CLIENT.clientId}`;
    const strangerFields = formFields((await strangerBrowser.get(strangerPath)).text, strangerPath);
    const { [`device_${many.devices[0]!.id}`]: _first, ...withoutFirst } = fields;
    // The consent form at /oauth/authorize as the page makes it, every box checked.
    const allow = { ...authorizationParams({ scope: 'read_device' }), csrf: fields.csrf!, choose_devices: '1', devices: 'chosen', share_later: 'on',
      ...Object.fromEntries(many.devices.map((d) => [`device_${d.id}`, 'on'])), decision: 'allow' };
    // A decision at /device, on a code entered (and counted) before.
    const started = (await (await fetch(`${service.authUrl}/oauth/device_authorization`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: DEMO_TV_CLIENT.clientId, scope: 'read_device' }),
    })).json()) as { user_code: string };
    const deviceForm = formFields((await b.postForm('/device', { ...formFields((await b.get('/device')).text, '/device'), user_code: started.user_code })).text, '/device');
    const before = await scan();

    const padTo = (form: Record<string, string>, size: number) => ({ ...form, note: 'x'.repeat(size - bytes(form) - '&note='.length) });
    const replies = {
      forged: await b.postForm(path, { ...fields, [`device_${randomUUID()}`]: 'on' }),
      othersDevice: await b.postForm(path, { ...fields, [`device_${stranger.devices[0]!.id}`]: 'on' }),
      uncheckedUnderAll: await b.postForm(path, { ...withoutFirst, devices: 'all' }),
      unknownMode: await b.postForm(path, { ...fields, devices: 'most' }),
      pastOwnersDevices: await b.postForm(path, padTo(fields, MAX_FORM_BYTES + COUNT * DEVICE_FIELD_BYTES + 1)),
      pastPagesLimit: await b.postForm(path, padTo(fields, DEVICE_CHOICE_FORM_BYTES + 1)),
      // Two devices justify no 40 KB form, though the page's limit would take it.
      fewDevicesLargeForm: await strangerBrowser.postForm(strangerPath, padTo(strangerFields, 40_000)),
      codeFormLarge: await b.postForm('/device', padTo({ ...formFields((await b.get('/device')).text, '/device'), user_code: 'BCDF-GHJK' }, MAX_FORM_BYTES + 1)),
      authorizeForged: await b.postForm('/oauth/authorize', { ...allow, [`device_${stranger.devices[0]!.id}`]: 'on' }),
      authorizeLarge: await b.postForm('/oauth/authorize', padTo(allow, MAX_FORM_BYTES + COUNT * DEVICE_FIELD_BYTES + 1)),
      deviceDecisionLarge: await b.postForm('/device', padTo({ ...deviceForm, decision: 'allow' }, MAX_FORM_BYTES + COUNT * DEVICE_FIELD_BYTES + 1)),
    };

    const outcome = Object.fromEntries(await Promise.all(Object.entries(replies).map(async ([name, reply]) => [name, [reply.status, textOf(reply.text)]] as const)));
    expect(Object.fromEntries(Object.entries(outcome).map(([name, [status]]) => [name, status]))).toEqual({
      forged: 400, othersDevice: 400, uncheckedUnderAll: 400, unknownMode: 400, pastOwnersDevices: 413, pastPagesLimit: 413, fewDevicesLargeForm: 413, codeFormLarge: 413,
      authorizeForged: 400, authorizeLarge: 413, deviceDecisionLarge: 413,
    });
    expect(outcome.forged![1]).toContain('is not one of your devices');
    expect(outcome.othersDevice![1]).toContain(`The device ${stranger.devices[0]!.id} is not one of your devices.`);
    expect(outcome.uncheckedUnderAll![1]).toContain('Only the devices checked below');
    expect(outcome.unknownMode![1]).toContain('Choose either all your devices or only the devices you check.');
    expect(outcome.authorizeForged![1]).toContain('is not one of your devices');
    for (const name of ['pastOwnersDevices', 'pastPagesLimit', 'fewDevicesLargeForm', 'codeFormLarge', 'authorizeLarge', 'deviceDecisionLarge']) {
      expect(outcome[name]![1]).toContain('Shorten what you entered');
    }
    // Each decision at /device is counted before anything else (guessing is bounded): that alone changed.
    const uncounted = (items: string[]) => items.filter((item) => !item.includes('"pk":"USERCODEENTRIES#'));
    expect(uncounted(await scan())).toEqual(uncounted(before));
  }, 180_000);

  it('in Chromium: the consent page and the grant page with 1,000 devices, accessible at 390 and 1280 px, and a choice saved', async () => {
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(`${service.authUrl}/login`);
    await page.getByLabel('E-mail address').fill(many.user.email);
    await page.getByLabel('Password').fill(many.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/account$/);
    // Asked afresh: the consent so far is withdrawn.
    await grants.deleteConsent(many.user.id, DEMO_CLIENT.clientId);
    await page.goto(`${service.authUrl}${authorizePath(authorizationParams({ scope: 'read_device' }))}`);
    await page.getByRole('group', { name: /Devices .* may see/ }).waitFor();
    // All devices is the default, the list folded away; the user chooses some and unfolds it.
    expect(await page.getByRole('checkbox', { name: /^Device \d+ / }).count()).toBe(0);
    await page.getByRole('radio', { name: 'Only the devices checked below' }).check();
    await page.getByText(`Your devices (${COUNT.toLocaleString('en-US')})`).click();
    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      expect(await page.getByRole('checkbox', { name: /^Device \d+ / }).count()).toBe(COUNT);
      expect(await accessibilityViolations(page), `consent at ${viewport.width} px`).toEqual([]);
    }
    await page.getByRole('checkbox', { name: 'Device 998 (Hall)' }).uncheck();
    // The application's redirect URI has no server here: the browser's request for it is answered in its place.
    const atApplication = (url: URL) => url.href.startsWith(DEMO_CLIENT.redirectUris[0]);
    await page.route(atApplication, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'the application' }));
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(atApplication);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
    expect(await consentOf(many.user.id, DEMO_CLIENT.clientId)).toMatchObject({ exceptDevices: [many.devices[998]!.id] });

    const path = `/account/apps/${DEMO_CLIENT.clientId}`;
    const { revision } = (await consentOf(many.user.id, DEMO_CLIENT.clientId))!;
    await page.goto(`${service.authUrl}${path}`);
    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      await page.getByRole('heading', { name: DEMO_CLIENT.name }).waitFor();
      expect(await accessibilityViolations(page), `grant page at ${viewport.width} px`).toEqual([]);
    }
    await page.getByRole('radio', { name: 'Only the devices checked below' }).check();
    await page.getByRole('checkbox', { name: 'Device 998 (Hall)' }).check();
    await page.getByRole('checkbox', { name: 'Device 999 (Kitchen)' }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: DEMO_CLIENT.name }).waitFor();
    expect(await consentOf(many.user.id, DEMO_CLIENT.clientId)).toMatchObject({ exceptDevices: [many.devices[999]!.id], revision: (revision ?? 0) + 1 });
  }, 240_000);
});
