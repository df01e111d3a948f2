import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { testEvent, webhookEvent, type WebhookEvent } from '#shared/webhooks/events';
import { newWebhookId } from '#shared/domain/webhook';
import { signWithSecrets } from '#shared/webhooks/signing';
import { startExampleApp, type ExampleApp } from '#local/example-app';
import { subscribeExampleApp } from '#local/example-webhook';
import { DEMO_USERS } from '#local/seed';
import { serviceFacts } from '#local/service';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { runTool } from '../support/run-tool';
import { tokenFor, useTable, useTestService } from '../support/service';

const ARTIFACTS = 'test-artifacts';
const [alice, bob] = DEMO_USERS;
const PHONE = { width: 390, height: 844 };

/** Webhooks seen in a real browser: the example app's live device page, and the console's webhook card. */
describe('webhooks in a real browser', () => {
  const service = useTestService({ webhooks: {} });
  const { doc } = useTable(service);
  let app: ExampleApp;
  let clientId: string;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    clientId = `home-dashboard-${randomUUID()}`;
    const clientSecret = randomToken();
    app = await startExampleApp({ port: 0, authUrl: service.authUrl, apiUrl: service.apiUrl, clientId, clientSecret });
    await createClientRepo({ doc, table: service.tableName }).createClient({
      clientId, secretHash: hashSecret(clientSecret), name: 'Home Dashboard (webhooks test)', description: '', website: app.url,
      redirectUris: [`${app.url}/callback`], developerId: bob.user.id, developerName: 'Ada Developer', createdAt: '2026-01-01T00:00:00.000',
    });
    // As `npm start` does: the example app's webhook registered, its secret handed to it.
    await subscribeExampleApp(app, { dynamodbEndpoint: service.dynamodbEndpoint, tableName: service.tableName, clientId });
    browser = await launchBrowser();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  /** POSTs an event to the example app as the delivery function does: Standard Webhooks headers, signed with `secrets`. */
  async function deliver(event: WebhookEvent, secrets: string[], tamper?: (body: string) => string): Promise<number> {
    const body = JSON.stringify(event);
    const headers = signWithSecrets(secrets, newWebhookId(new Date()), new Date(), body);
    const response = await fetch(app.webhookUrl, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: tamper ? tamper(body) : body });
    await response.body?.cancel();
    return response.status;
  }

  const currentSecrets = async () => (await createWebhookRepo({ doc, table: service.tableName }).getSubscription(clientId))!.secrets.map((s) => s.secret);
  const rowOf = (name: string) => page.getByRole('row').filter({ hasText: name });

  /** The example app's device page of `who`, connecting it first unless it already is (signing in and allowing as needed). */
  async function connect(who: (typeof DEMO_USERS)[number]) {
    await page.goto(app.url);
    if (await page.getByRole('link', { name: 'Connect your devices' }).count()) {
      await page.getByRole('link', { name: 'Connect your devices' }).click();
      await page.waitForURL((url) => url.origin !== app.url || url.pathname === '/devices');
      if (new URL(page.url()).pathname === '/login') {
        await page.getByLabel('E-mail address').fill(who.user.email);
        await page.getByLabel('Password').fill(who.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL((url) => url.pathname !== '/login');
      }
      if (new URL(page.url()).pathname === '/oauth/authorize') await page.getByRole('button', { name: 'Allow' }).click();
    } else {
      await page.goto(`${app.url}/devices`);
    }
    await page.waitForURL(`${app.url}/devices`);
    await page.getByRole('heading', { name: `Hello ${who.user.firstname} ${who.user.lastname}` }).waitFor();
  }

  it('updates the example app\'s device page without a reload when a verified event arrives, and ignores forged or stale ones', async () => {
    await connect(alice);
    const device = alice.devices[1]!;
    // A reload would lose this mark.
    await page.evaluate('window.__notReloaded = true');
    const secrets = await currentSecrets();
    const at = new Date();
    const updated = (sequence: number, name: string) =>
      webhookEvent('device.updated', { user_id: alice.user.id, device_id: device.id, sequence, changes: { name, active: true } }, at);

    // Forged: a changed body or another secret are refused (401) and change nothing.
    expect(await deliver(updated(50, 'Forged name'), secrets, (body) => body.replace('Forged', 'Tampered'))).toBe(401);
    expect(await deliver(updated(50, 'Forged name'), ['whsec_' + Buffer.alloc(32, 7).toString('base64')])).toBe(401);

    expect(await deliver(updated(50, 'Reading corner'), secrets)).toBe(204);
    await rowOf('Reading corner').waitFor();
    expect(await rowOf('Reading corner').locator('strong').innerText()).toBe('On');
    await page.getByRole('button', { name: 'Turn off away mode for Reading corner' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Reading corner changed: name Reading corner, away mode on.' }).waitFor();

    // Connection changes, of the same write (same sequence), apply too.
    expect(await deliver(webhookEvent('device.connection_changed', {
      user_id: alice.user.id, device_id: device.id, sequence: 50, connected: !device.connected, last_connection: '2030-01-01T00:00:00.000',
    }, at), secrets)).toBe(204);
    await rowOf('Reading corner').getByText(device.connected ? 'Offline' : 'Connected').waitFor();

    // An older write arriving late does not undo the newer one.
    expect(await deliver(updated(49, 'Stale name'), secrets)).toBe(204);
    await page.waitForTimeout(300);
    expect(await rowOf('Stale name').count()).toBe(0);
    expect(await page.evaluate('window.__notReloaded')).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.setViewportSize(PHONE);
    const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
    await page.screenshot({ path: join(ARTIFACTS, 'example-app-live.png'), fullPage: true });
    await page.setViewportSize({ width: 1000, height: 700 });
  });

  it('shows a change made through the API by another application, live, through the local webhook pipeline', async () => {
    await connect(alice);
    const device = alice.devices[0]!;
    await page.evaluate('window.__notReloaded = true');
    const other = await tokenFor(service, alice.user.id, ['write_device']);
    const response = await fetch(`${service.apiUrl}/devices/${device.id}`, {
      method: 'PUT', headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Changed elsewhere' }),
    });
    expect(response.status).toBe(204);
    await rowOf('Changed elsewhere').waitFor({ timeout: 5_000 });
    expect(await page.evaluate('window.__notReloaded')).toBe(true);

    // An operator flips the device's connection with `npm run admin -- set-connection`: the example
    // app verifies the device.connection_changed (it answers 401 to anything unverified, so the
    // delivery recorded as 204 is a verified one) and shows it, still without a reload.
    const stateDir = mkdtempSync(join(tmpdir(), 'dus-set-connection-'));
    try {
      writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
      // This process has the service's environment; TABLE_NAME would send the tool to AWS.
      const run = await runTool('local/admin.ts', ['set-connection', '--device', device.id, '--connected', String(!device.connected)], { STATE_DIR: stateDir, TABLE_NAME: '' });
      expect(run.code, run.stderr).toBe(0);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    await rowOf('Changed elsewhere').getByText(device.connected ? 'Offline' : 'Connected').waitFor({ timeout: 5_000 });
    expect(await page.evaluate('window.__notReloaded')).toBe(true);
    await service.webhooks!.settled();
    const deliveries = await createWebhookRepo({ doc, table: service.tableName }).listDeliveries(clientId);
    expect(deliveries.find((d) => d.eventType === 'device.connection_changed')).toMatchObject({ status: 'delivered', lastStatusCode: 204 });
  });

  it('shows the console\'s webhook card with its deliveries at 390 px, axe clean', async () => {
    const webhooks = createWebhookRepo({ doc, table: service.tableName });
    const at = new Date();
    const ids = [newWebhookId(new Date(at.getTime() + 60_000)), newWebhookId(new Date(at.getTime() + 61_000))];
    await webhooks.createDelivery({ clientId, webhookId: ids[0]!, eventType: 'webhook.test', payload: JSON.stringify(testEvent(clientId, at)) }, at);
    await webhooks.recordAttempt(clientId, ids[0]!, { status: 'delivered', at, statusCode: 204, latencyMs: 42 });
    await webhooks.createDelivery({ clientId, webhookId: ids[1]!, eventType: 'device.connection_changed', payload: '{}' }, at);
    await webhooks.recordAttempt(clientId, ids[1]!, { status: 'retrying', at, statusCode: 500, latencyMs: 1234 });
    await webhooks.recordAttempt(clientId, ids[1]!, { status: 'retrying', at, error: 'timed out' });

    await browser.context.clearCookies();
    await page.goto(`${service.authUrl}/login?return_to=${encodeURIComponent(`/developer/apps/${clientId}`)}`);
    await page.getByLabel('E-mail address').fill(bob.user.email);
    await page.getByLabel('Password').fill(bob.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Webhook', exact: true }).waitFor();
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(app.webhookUrl);
    const rows = page.getByRole('table', { name: 'Last deliveries' }).getByRole('row');
    // Newest first; the earlier tests' deliveries (the live update) are older.
    expect(await rows.nth(1).innerText()).toMatch(/device\.connection_changed[\s\S]*Retrying[\s\S]*2 attempts[\s\S]*1234 ms/);
    expect(await rows.nth(2).innerText()).toMatch(/webhook\.test[\s\S]*Delivered \(HTTP 204\)[\s\S]*1 attempt[\s\S]*42 ms/);

    for (const viewport of [PHONE, { width: 1280, height: 800 }]) {
      await page.setViewportSize(viewport);
      const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
      expect(scrollWidth, `${viewport.width} px`).toBeLessThanOrEqual(innerWidth);
      expect(await accessibilityViolations(page)).toEqual([]);
    }
    await page.setViewportSize(PHONE);
    await page.locator('#webhook').screenshot({ path: join(ARTIFACTS, 'console-webhook-390.png') });

    // A form error, as a developer sees it: the metadata address is refused in words.
    await page.getByLabel('Webhook URL').fill('http://169.254.169.254/');
    await page.getByRole('button', { name: 'Save webhook URL' }).click();
    await page.getByText('The URL must start with https://.').waitFor();
    expect(await page.getByLabel('Webhook URL').getAttribute('aria-invalid')).toBe('true');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1000, height: 700 });
  });
});
