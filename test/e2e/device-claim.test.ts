import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentKey, deviceKey, unclaimedDeviceKey } from '#shared/data/item-keys';
import { formatClaimCode, newClaimCode } from '#shared/domain/claim-code';
import { formatTimestamp } from '#shared/domain/time';
import { hashSecret } from '#shared/secrets';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { countRequests } from '../support/count-requests';
import { makeDevice } from '../support/factories';
import { Browser, createAccount, formFields, newDeveloperApp, signIn, textOf, type Account } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';
import { startReceiver, type Received } from '../support/webhook-receiver';

// Owners claim their devices: a device provisioned to nobody is added from the account's devices
// page with the claim code printed on it, once; the applications that share later devices hear
// `device.added`; removing it frees it (its consents no longer name it, the applications that saw
// it hear `device.removed`) for a next owner with a new code. Shown in Chromium, with the entry
// limit under 30 parallel wrong codes, and the refusals of bad input, each with nothing written.

const TIME_SCALE = 1e-4;

describe('claiming and removing devices', () => {
  const service = useTestService({ webhooks: { timeScale: TIME_SCALE } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const stops: (() => Promise<void>)[] = [];
  let browser: TestBrowser | undefined;

  afterAll(async () => {
    await browser?.close();
    for (const stop of stops) await stop();
  });

  /** A device provisioned to nobody, as `npm run admin -- provision-device` leaves it; its printed code. */
  async function unclaimedDevice(name = 'Hall sensor') {
    const device = makeDevice({ name, connected: false });
    const code = newClaimCode();
    await repos.claims.createUnclaimedDevice(device, hashSecret(code));
    return { device, code: formatClaimCode(code) };
  }

  /** Every item but the entry counters (which count every entry, refused or not), in a comparable form. */
  async function scanAll(): Promise<string[]> {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.filter((item) => !String(item.pk).startsWith('CLAIMENTRIES#')).map((item) => JSON.stringify(Object.entries(item).sort())).sort();
  }
  const raw = async (key: Record<string, string>) => (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;

  /** A signed-in HTTP browser on the devices page; the page's form fields. */
  async function devicesPage(account: Account) {
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account, '/account/devices')).status).toBe(303);
    const page = await b.get('/account/devices');
    expect(page.status).toBe(200);
    return { b, page, claimFields: formFields(page.text, '/account/devices/claim') };
  }

  describe('in Chromium, with the applications listening', () => {
    let owner: Account & { user: { id: string } };
    let later: { clientId: string; hook: Awaited<ReturnType<typeof startReceiver>> };
    let chosen: { clientId: string; hook: Awaited<ReturnType<typeof startReceiver>> };
    const other = makeDevice({ name: 'Garage' });
    let claimed: Awaited<ReturnType<typeof unclaimedDevice>>;

    beforeAll(async () => {
      owner = await createAccount(service);
      await repos.devices.createDevice(owner.user.id, other);
      /** An application the owner authorized with `choice`, with its webhook. */
      const app = async (name: string, choice: object) => {
        const { clientId } = await newDeveloperApp(service, name);
        const hook = await startReceiver();
        stops.push(hook.stop);
        await repos.grants.saveConsent({ userId: owner.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()), ...choice });
        await repos.webhooks.setUrl(clientId, hook.url);
        return { clientId, hook };
      };
      later = await app('Shares later devices', {});
      chosen = await app('Sees the garage only', { onlyDevices: [other.id] });
      claimed = await unclaimedDevice('Hall sensor');
      browser = await launchBrowser();
    });

    const eventOf = (r: Received) => JSON.parse(r.body) as { type: string; data: { device_id: string; sequence: number } };
    const about = (id: string, type: string) => (r: Received) => r.body.includes(id) && eventOf(r).type === type;

    it('adds the device with its code typed: listed, device.added to the application that shares later devices only', async () => {
      const { page } = browser!;
      await page.goto(`${service.authUrl}/login?return_to=%2Faccount`);
      await page.getByLabel('E-mail address').fill(owner.user.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Your devices' }).click();
      await page.getByRole('heading', { name: 'Your devices' }).waitFor();
      // Typed as people type it: lower case, spaces for dashes.
      await page.getByLabel('Claim code').fill(claimed.code.toLowerCase().replaceAll('-', ' '));
      await page.getByRole('button', { name: 'Add the device' }).click();

      await page.getByRole('status').filter({ hasText: 'The device is added' }).waitFor();
      expect(await page.getByRole('heading', { name: 'Hall sensor' }).count()).toBe(1);
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 844 });
        expect(await accessibilityViolations(page), `devices page at ${width} px`).toEqual([]);
        expect(await page.evaluate('document.documentElement.scrollWidth'), `devices page at ${width} px`).toBe(width);
      }
      expect(await raw(deviceKey(owner.user.id, claimed.device.id))).toMatchObject({ ownerId: owner.user.id, name: 'Hall sensor' });
      expect(await raw(unclaimedDeviceKey(claimed.device.id))).toBeUndefined();

      const added = await later.hook.next(about(claimed.device.id, 'device.added'), 20_000);
      expect(JSON.parse(added.body)).toMatchObject({ type: 'device.added', data: { user_id: owner.user.id, device_id: claimed.device.id, device: { name: 'Hall sensor' } } });
      // The application that sees chosen devices only hears of its own: a later write of the garage comes after, and the claim made it nothing.
      await repos.devices.updateOwnedDevice(owner.user.id, other.id, { name: 'Garage door' });
      await chosen.hook.next((r) => r.body.includes('Garage door'), 20_000);
      expect(chosen.hook.received.some((r) => r.body.includes(claimed.device.id))).toBe(false);
    });

    it('refuses a second claim of the same code, by anyone: the device stays its owner\'s', async () => {
      const stranger = await createAccount(service);
      const { b, claimFields } = await devicesPage(stranger);
      const before = await scanAll();

      const reply = await b.postForm('/account/devices/claim', { ...claimFields, claim_code: claimed.code });

      expect(reply.status).toBe(400);
      expect(textOf(reply.text)).toContain('This claim code adds no device');
      expect(await scanAll()).toEqual(before);
      expect(await raw(deviceKey(stranger.user.id, claimed.device.id))).toBeUndefined();
    });

    it('removes the device: freed, dropped from every consent, device.removed to the applications that saw it, no grant.updated', async () => {
      // The owner lets the chosen-devices application see the new device too.
      const consent = await repos.grants.getConsent(owner.user.id, chosen.clientId);
      await repos.grants.saveConsent({ ...consent!, onlyDevices: [other.id, claimed.device.id], revision: 1 });
      await chosen.hook.next((r) => eventOf(r).type === 'grant.updated', 20_000);
      const { page } = browser!;
      await page.goto(`${service.authUrl}/account/devices`);

      await page.getByRole('button', { name: 'Remove Hall sensor' }).click();

      await page.getByRole('status').filter({ hasText: 'The device is removed' }).waitFor();
      expect(await page.getByRole('heading', { name: 'Hall sensor' }).count()).toBe(0);
      expect(await raw(deviceKey(owner.user.id, claimed.device.id))).toBeUndefined();
      expect(await raw(unclaimedDeviceKey(claimed.device.id))).toMatchObject({ id: claimed.device.id, connected: false });
      expect(await raw(consentKey(owner.user.id, chosen.clientId))).toMatchObject({ onlyDevices: [other.id] });
      for (const app of [later, chosen]) {
        const removed = await app.hook.next(about(claimed.device.id, 'device.removed'), 20_000);
        expect(eventOf(removed).data).toMatchObject({ device_id: claimed.device.id });
      }
      // The consent's rewrite told no one of a grant change (a later write comes after it): the one
      // grant.updated is the owner's choice above.
      await repos.devices.updateOwnedDevice(owner.user.id, other.id, { name: 'Garage gate' });
      await chosen.hook.next((r) => r.body.includes('Garage gate'), 20_000);
      expect(chosen.hook.received.filter((r) => eventOf(r).type === 'grant.updated')).toHaveLength(1);
    });

    it('frees the device for its next owner: with its new code, another account adds it', async () => {
      const code = newClaimCode();
      expect(await repos.claims.reissueClaim((await repos.claims.getUnclaimedDevice(claimed.device.id))!, hashSecret(code))).toBe(true);
      const next = await createAccount(service);
      const { b, claimFields } = await devicesPage(next);

      const reply = await b.postForm('/account/devices/claim', { ...claimFields, claim_code: formatClaimCode(code) });

      expect(reply.status).toBe(303);
      expect(reply.location).toBe('/account/devices?done=added');
      expect(textOf((await b.get('/account/devices')).text)).toContain('Hall sensor');
      expect(await raw(deviceKey(next.user.id, claimed.device.id))).toMatchObject({ ownerId: next.user.id });
    });
  });

  it('counts every entry atomically: of 30 parallel wrong codes at most 20 are looked up, the rest answer 429, the right one too', async () => {
    const account = await createAccount(service);
    const { b, claimFields } = await devicesPage(account);
    const { code } = await unclaimedDevice();
    const wrong = formatClaimCode(newClaimCode());
    // The service's own requests, to count the code's look-ups (the local service runs in this process).
    const { doc: serviceDoc } = await import('#shared/runtime');
    const requests = countRequests(serviceDoc, { keepInputs: true });

    try {
      const replies = await Promise.all(Array.from({ length: 30 }, () => b.postForm('/account/devices/claim', { ...claimFields, claim_code: wrong })));

      const statuses = replies.map((r) => r.status);
      const lookups = requests.inputs.filter((input) => String((input as { Key?: { pk?: string } }).Key?.pk).startsWith('CLAIMCODE#'));
      expect(lookups.length).toBeLessThanOrEqual(20);
      expect(statuses.filter((s) => s === 400)).toHaveLength(lookups.length);
      // On a busy machine an entry whose count kept colliding with the others' may answer 503: counted nowhere, looked up nowhere.
      expect(statuses.filter((s) => s !== 400 && s !== 429 && s !== 503)).toEqual([]);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
      expect(textOf(replies.find((r) => r.status === 429)!.text)).toContain('Too many claim codes');
    } finally {
      requests.detach();
    }
    // Whatever the first burst made of it, the window is used up once 20 entries were counted.
    for (let i = 0; i < 20; i++) await b.postForm('/account/devices/claim', { ...claimFields, claim_code: wrong });
    expect((await b.postForm('/account/devices/claim', { ...claimFields, claim_code: code })).status).toBe(429);
  });

  describe('bad input: a clear error, nothing written', () => {
    it.each([
      ['a malformed code', { claim_code: 'AEIO-U123' }, 400, 'That is not a claim code'],
      ['no code', {}, 400, 'That is not a claim code'],
      ['an overlong code', { claim_code: 'B'.repeat(65) }, 400, 'That is not a claim code'],
    ])('refuses %s', async (_label, fields, status, message) => {
      const account = await createAccount(service);
      const { b, claimFields } = await devicesPage(account);
      const before = await scanAll();
      const { claim_code: _code, ...rest } = claimFields;

      const reply = await b.postForm('/account/devices/claim', { ...rest, ...fields });

      expect(reply.status).toBe(status);
      expect(textOf(reply.text)).toContain(message);
      expect(await scanAll()).toEqual(before);
    });

    it('refuses a forged claim form (CSRF) and a claim without a session', async () => {
      const account = await createAccount(service);
      const { b, claimFields } = await devicesPage(account);
      const { code } = await unclaimedDevice();
      const before = await scanAll();

      const forged = await b.postForm('/account/devices/claim', { ...claimFields, csrf: 'forged', claim_code: code });
      const signedOut = await new Browser(service.authUrl).postForm('/account/devices/claim', { ...claimFields, claim_code: code });

      expect(forged.status).toBe(403);
      expect(signedOut.status).not.toBe(200);
      expect(await scanAll()).toEqual(before);
    });

    it.each([
      ['another account\'s device', 'theirs'],
      ['a device that does not exist', randomUUID()],
      ['a malformed device id', 'not-a-device'],
    ])('refuses to remove %s: 404, nothing written', async (_label, target) => {
      const theirs = makeDevice();
      await repos.devices.createDevice((await createAccount(service)).user.id, theirs);
      const account = await createAccount(service);
      const { b, page } = await devicesPage(account);
      const id = target === 'theirs' ? theirs.id : target;
      const before = await scanAll();

      const reply = await b.postForm(`/account/devices/${id}/remove`, { csrf: formFields(page.text, '/account/devices/claim').csrf! });

      expect(reply.status).toBe(404);
      expect(textOf(reply.text)).toContain('That device is not one of yours');
      expect(await scanAll()).toEqual(before);
    });
  });
});
