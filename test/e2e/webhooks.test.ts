import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { serviceFacts } from '#local/service';
import { formCsrfToken } from '#shared/http/csrf';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_SECONDS } from '#shared/webhooks/deliver';
import { Browser, createAccount, formFields, obtainCode, signIn, type Account } from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { runTool } from '../support/run-tool';
import { tokenFor, useTable, useTestService } from '../support/service';
import { startReceiver, type Received } from '../support/webhook-receiver';

// The webhook pipeline end to end on the local service: the table's stream → the fan-out handler →
// the delivery queue (the SQS stand-in, its timeouts compressed by TIME_SCALE) → the delivery
// handler → a receiver on 127.0.0.1.
const TIME_SCALE = 1e-4;
const [ALICE] = DEMO_USERS;
const DEVICE = ALICE.devices[0].id;

describe('webhooks', () => {
  const service = useTestService({ webhooks: { timeScale: TIME_SCALE } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  const stops: (() => Promise<void>)[] = [];

  /** A new application of Alice's, subscribed to `url`, holding a consent of Alice's for `scopes`; its id and signing secret. */
  async function subscribedApp(url: string, scopes = ['read_device']) {
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: 'Webhook test app', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    if (scopes.length > 0) await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes, grantedAt: formatTimestamp(new Date()) });
    const { secret } = await webhooks.setUrl(clientId, url);
    return { clientId, secret: secret! };
  }

  async function receiver(...args: Parameters<typeof startReceiver>) {
    const r = await startReceiver(...args);
    stops.push(r.stop);
    return r;
  }

  async function putDevice(changes: Record<string, unknown>, clientId = 'another-app') {
    const token = await tokenFor(service, ALICE.user.id, ['write_device'], { clientId });
    const res = await fetch(`${service.apiUrl}/devices/${DEVICE}`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(changes),
    });
    expect(res.status).toBe(204);
  }

  const headersOf = (r: Received) => ({
    'webhook-id': r.headers['webhook-id']!, 'webhook-timestamp': r.headers['webhook-timestamp']!, 'webhook-signature': r.headers['webhook-signature']!,
  });

  beforeAll(async () => {
    // The first event loads both handlers and their SDK clients (a cold start, in Lambda too): the 2 s below is for a warm pipeline.
    const warm = await receiver();
    const { clientId } = await subscribedApp(warm.url);
    await putDevice({ place: 'Warm-up' });
    await warm.next((r) => r.body.includes('Warm-up'), 20_000);
    await webhooks.removeSubscription(clientId);
  });

  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('a PUT by another application → a device.updated that both verifiers accept, within 2 s', async () => {
    const hook = await receiver();
    const { secret } = await subscribedApp(hook.url);
    const name = `Kitchen ${randomUUID().slice(0, 8)}`;
    const started = Date.now();
    await putDevice({ name, sound: false });
    const got = await hook.next((r) => r.body.includes(name), 2000);
    expect(got.at - started).toBeLessThan(2000);

    const event = new StandardWebhook(secret).verify(got.body, headersOf(got)) as { type: string; data: Record<string, unknown> };
    // svix's verifier returns nothing and throws on a bad signature.
    expect(() => new SvixWebhook(secret).verify(got.body, headersOf(got))).not.toThrow();
    expect(event.type).toBe('device.updated');
    expect(event.data).toMatchObject({ user_id: ALICE.user.id, device_id: DEVICE, changes: { name, sound: false } });
    expect(Object.keys(event.data.changes as object).sort()).toEqual(['name', 'sound']);
    expect(event.data.sequence).toEqual(expect.any(Number));
    expect(got.headers['webhook-id']).toMatch(/^msg_[0-9a-z]{9}_[0-9a-f]{20}$/);

    // A tampered body, or the same delivery presented long after, is refused by both.
    const tampered = got.body.replace(name, 'Evil');
    expect(() => new StandardWebhook(secret).verify(tampered, headersOf(got))).toThrow();
    expect(() => new SvixWebhook(secret).verify(tampered, headersOf(got))).toThrow();
  });

  it('sequence numbers grow with every write of the device', async () => {
    const hook = await receiver();
    await subscribedApp(hook.url);
    await putDevice({ place: 'Seq 1' });
    await putDevice({ place: 'Seq 2' });
    const first = JSON.parse((await hook.next((r) => r.body.includes('Seq 1'))).body);
    const second = JSON.parse((await hook.next((r) => r.body.includes('Seq 2'))).body);
    expect(second.data.sequence).toBe(first.data.sequence + 1);
  });

  it('an operator set-connection → device.connection_changed', async () => {
    const hook = await receiver();
    await subscribedApp(hook.url);
    const devices = createDeviceRepo({ doc, table: service.tableName });
    const at = formatTimestamp(new Date());
    // What `npm run admin -- set-connection` does.
    await devices.setConnection(ALICE.user.id, DEVICE, false, at);
    await devices.setConnection(ALICE.user.id, DEVICE, true, at);
    const got = await hook.next((r) => r.body.includes('"connected":true'));
    expect(JSON.parse(got.body)).toMatchObject({ type: 'device.connection_changed', data: { device_id: DEVICE, connected: true, last_connection: at } });
  });

  it('an application without read_device, or without a consent, gets no device event', async () => {
    const covered = await receiver();
    const uncovered = await receiver();
    const stranger = await receiver();
    await subscribedApp(covered.url);
    await subscribedApp(uncovered.url, ['read_user']);
    await subscribedApp(stranger.url, []);
    await putDevice({ place: 'Scope check' });
    await covered.next((r) => r.body.includes('Scope check'));
    await service.webhooks!.settled();
    expect(uncovered.received).toEqual([]);
    expect(stranger.received).toEqual([]);
  });

  it('the user revokes the application → grant.revoked, and no device event after it', async () => {
    const hook = await receiver();
    const witness = await receiver();
    const { clientId } = await subscribedApp(hook.url);
    await subscribedApp(witness.url);
    const sessionId = await repos.sessions.createSession(ALICE.user.id);
    const res = await fetch(`${service.authUrl}/account/apps/${clientId}/revoke`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie: `session=${encodeURIComponent(sessionId)}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${formCsrfToken([`session=${encodeURIComponent(sessionId)}`])!}`,
    });
    expect(res.status).toBe(303);
    const revoked = await hook.next((r) => r.body.includes('grant.revoked'));
    expect(JSON.parse(revoked.body)).toMatchObject({ type: 'grant.revoked', data: { user_id: ALICE.user.id, client_id: clientId, reason: 'user_revoked' } });

    await putDevice({ place: 'After revocation' });
    await witness.next((r) => r.body.includes('After revocation'));
    await service.webhooks!.settled();
    expect(hook.events().map((e) => e.type)).toEqual(['grant.revoked']);
  });

  /** Calls the token endpoint as the demo application. */
  async function tokenRequest(params: Record<string, string>) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...params, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  /**
   * A new account with one device that authorized the demo application (read_device) over HTTP, the
   * demo application subscribed to a new receiver (its webhook replaced), and its refresh token.
   */
  async function accountConnectedToDemoApp() {
    const account = await createAccount(service);
    const deviceId = `dev-${randomUUID()}`;
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(account.user.id, {
      ...ALICE.devices[0], id: deviceId, name: 'Hall light', version: '1.0.0', last_connection: formatTimestamp(new Date(0)), connected: false,
    });
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    const { code, redirectUri } = await obtainCode(b, {}, account);
    const exchange = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(exchange.status).toBe(200);
    const hook = await receiver();
    await webhooks.setUrl(DEMO_CLIENT.clientId, hook.url);
    return { account, deviceId, hook, refreshToken: exchange.body.refresh_token! };
  }

  /** The demo application's events about `account` (other tests' users may share the receiver's application). */
  const eventsAbout = (hook: Awaited<ReturnType<typeof receiver>>, account: Account & { user: { id: string } }) =>
    hook.events().filter((e) => (e.data as { user_id?: string }).user_id === account.user.id);

  it('a refresh token used again after its rotation → grant.revoked (refresh_token_reuse)', async () => {
    const { account, hook, refreshToken: first } = await accountConnectedToDemoApp();
    const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first });
    expect(second.status).toBe(200);
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token! })).status).toBe(200);
    // The first token again, once its successor was used: reuse, the family is revoked.
    expect(await tokenRequest({ grant_type: 'refresh_token', refresh_token: first })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const got = await hook.next((r) => r.body.includes('grant.revoked') && r.body.includes(account.user.id));
    expect(JSON.parse(got.body)).toMatchObject({
      type: 'grant.revoked', data: { user_id: account.user.id, client_id: DEMO_CLIENT.clientId, reason: 'refresh_token_reuse' },
    });
  });

  it('a password reset that signs out every application → grant.revoked, and no device event after it', async () => {
    const { account, deviceId, hook } = await accountConnectedToDemoApp();
    // A witness application of the same user, still granted, to know when a later device event has gone through.
    const witness = await receiver();
    const witnessId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId: witnessId, secretHash: 'x', name: 'Witness', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await webhooks.setUrl(witnessId, witness.url);
    const devices = createDeviceRepo({ doc, table: service.tableName });

    // The user asks for a reset link and uses it with "Also sign out every connected application" ticked.
    const b = new Browser(service.authUrl);
    const form = await b.get('/password-reset');
    expect((await b.postForm('/password-reset', { ...formFields(form.text, '/password-reset'), email: account.user.email })).status).toBe(303);
    const mail = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password').at(-1)!;
    const token = linkToken(service, mail.text, '/password-reset/confirm');
    const page = await b.get(`/password-reset/confirm?token=${token}`);
    const reset = await b.postForm('/password-reset/confirm', {
      ...formFields(page.text, '/password-reset/confirm'), password: 'a passphrase only the owner knows now', sign_out_apps: 'yes',
    });
    expect(reset).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });

    const got = await hook.next((r) => r.body.includes('grant.revoked') && r.body.includes(account.user.id));
    expect(JSON.parse(got.body)).toMatchObject({ type: 'grant.revoked', data: { user_id: account.user.id, client_id: DEMO_CLIENT.clientId } });

    // Granted after the reset: the witness gets the next device event; the demo application gets none.
    await repos.grants.saveConsent({ userId: account.user.id, clientId: witnessId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    await devices.updateOwnedDevice(account.user.id, deviceId, { place: 'After the reset' });
    await devices.setConnection(account.user.id, deviceId, true, formatTimestamp(new Date()));
    await witness.next((r) => r.body.includes('device.connection_changed'));
    await service.webhooks!.settled();
    expect(eventsAbout(hook, account).map((e) => e.type).filter((t) => t.startsWith('device.'))).toEqual([]);
    expect(eventsAbout(hook, account).map((e) => e.type)).toContain('grant.revoked');
  });

  it('a device event still being retried when the grant ends is dropped at delivery, not sent', async () => {
    let failing = true;
    const hook = await receiver(() => (failing ? 500 : 204));
    const { clientId } = await subscribedApp(hook.url);
    await putDevice({ place: 'Racing the revocation' });
    await hook.next((r) => r.body.includes('Racing the revocation'));
    await repos.grants.deleteConsent(ALICE.user.id, clientId);
    // At most the attempt already under way (it read the consent before it was deleted) may still arrive.
    const sentBefore = hook.received.filter((r) => r.body.includes('Racing the revocation')).length;
    failing = false;
    await service.webhooks!.settled();
    expect(hook.received.filter((r) => r.body.includes('Racing the revocation')).length).toBeLessThanOrEqual(sentBefore + 1);
    const delivery = (await webhooks.listDeliveries(clientId)).find((d) => d.eventType === 'device.updated');
    expect(delivery).toMatchObject({ status: 'failed', lastError: 'grant ended' });
    expect(hook.events().map((e) => e.type)).toContain('grant.revoked');
  });

  it('a receiver answering 500 is retried on the (compressed) schedule, then dead-lettered', async () => {
    const hook = await receiver(() => 500);
    const { clientId } = await subscribedApp(hook.url);
    await putDevice({ place: 'Always failing' });
    const deadline = Date.now() + 30_000;
    while (hook.received.length < MAX_DELIVERY_ATTEMPTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await service.webhooks!.settled();
    expect(hook.received).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const gaps = hook.received.slice(1).map((r, i) => r.at - hook.received[i]!.at);
    gaps.forEach((gap, i) => {
      const planned = RETRY_DELAYS_SECONDS[i]! * 1000 * TIME_SCALE;
      expect(gap).toBeGreaterThanOrEqual(planned - 5);
      expect(gap).toBeLessThan(planned * 1.2 + 500);
    });
    const [delivery] = (await webhooks.listDeliveries(clientId)).filter((d) => d.eventType === 'device.updated');
    expect(delivery).toMatchObject({ status: 'dead', attempts: MAX_DELIVERY_ATTEMPTS, lastStatusCode: 500 });
    const deadLetter = service.webhooks!.queue.deadLetters().find((m) => JSON.parse(m.body).webhookId === delivery!.webhookId);
    expect(deadLetter).toBeDefined();
    expect((await webhooks.getSubscription(clientId))!.failingSince).toEqual(expect.any(String));

    // The stand-in refuses a visibility timeout as SQS does (at most 12 hours from each receipt):
    // every backoff was accepted, one after each failed attempt but the last…
    const changes = service.webhooks!.queue.visibilityChanges().filter((c) => c.messageId === deadLetter!.messageId);
    expect(changes.map((c) => [c.receiveCount, c.refused])).toEqual(RETRY_DELAYS_SECONDS.map((_, i) => [i + 1, undefined]));
    // …so the attempts span more than the 24 hours the documentation promises (simulated time).
    const spanSeconds = (hook.received.at(-1)!.at - hook.received[0]!.at) / 1000 / TIME_SCALE;
    expect(spanSeconds).toBeGreaterThanOrEqual(24 * 3600);
    expect(spanSeconds).toBeGreaterThanOrEqual(RETRY_DELAYS_SECONDS.reduce((a: number, b: number) => a + b, 0));
  }, 60_000);

  it('"send again" redelivers with the same webhook-id and body; "send test event" sends webhook.test', async () => {
    const hook = await receiver();
    const { clientId, secret } = await subscribedApp(hook.url);
    await putDevice({ place: 'Send me again' });
    const first = await hook.next((r) => r.body.includes('Send me again'));
    // The console functions' dispatch, loaded after the service set the environment the runtime reads.
    const { redeliver, sendTestEvent } = await import('#shared/runtime');
    expect(await redeliver(clientId, first.headers['webhook-id']!)).toBe(true);
    const deadline = Date.now() + 5000;
    while (hook.received.filter((r) => r.headers['webhook-id'] === first.headers['webhook-id']).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const again = hook.received.filter((r) => r.headers['webhook-id'] === first.headers['webhook-id']);
    expect(again).toHaveLength(2);
    expect(again[1]!.body).toBe(first.body);
    expect(new StandardWebhook(secret).verify(again[1]!.body, headersOf(again[1]!))).toBeTruthy();
    expect(await redeliver(clientId, 'msg_not-an-id')).toBe(false);
    expect(await redeliver(`app-${randomUUID()}`, first.headers['webhook-id']!)).toBe(false);

    const testId = await sendTestEvent(clientId);
    const test = await hook.next((r) => r.headers['webhook-id'] === testId);
    expect(JSON.parse(test.body)).toMatchObject({ type: 'webhook.test', data: { client_id: clientId } });
    await service.webhooks!.settled();
    const listed = await webhooks.listDeliveries(clientId);
    expect(listed[0]).toMatchObject({ webhookId: testId, status: 'delivered', attempts: 1, lastStatusCode: 204 });
    expect(listed.find((d) => d.webhookId === first.headers['webhook-id'])).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('an unreachable, slow, redirecting or huge-answering receiver blocks no other and loses no event', async () => {
    const good = await receiver();
    const slow = await receiver(() => 'hang');
    const redirecting = await receiver(() => 'redirect');
    const huge = await receiver(() => 'huge');
    const closed = await startReceiver();
    await closed.stop();
    const apps = {
      slow: await subscribedApp(slow.url),
      redirecting: await subscribedApp(redirecting.url),
      huge: await subscribedApp(huge.url),
      unreachable: await subscribedApp(closed.url),
      good: await subscribedApp(good.url),
    };
    const started = Date.now();
    await putDevice({ place: 'Bad neighbours' });
    await good.next((r) => r.body.includes('Bad neighbours'), 2000);
    expect(Date.now() - started).toBeLessThan(2000);
    // The slow one is given up after 5 s; every other outcome is recorded sooner.
    await new Promise((r) => setTimeout(r, 5500));
    const statusOf = async (clientId: string) => (await webhooks.listDeliveries(clientId)).find((d) => d.eventType === 'device.updated');
    expect(await statusOf(apps.huge.clientId)).toMatchObject({ status: 'delivered', lastStatusCode: 200 });
    expect(await statusOf(apps.redirecting.clientId)).toMatchObject({ lastStatusCode: 307 });
    expect((await statusOf(apps.redirecting.clientId))!.status).not.toBe('delivered');
    expect(await statusOf(apps.unreachable.clientId)).toMatchObject({ lastError: 'connection refused' });
    expect(await statusOf(apps.slow.clientId)).toMatchObject({ lastError: 'timeout' });
    expect(redirecting.received.length).toBeGreaterThan(0);
    for (const app of [apps.slow, apps.redirecting, apps.unreachable]) await webhooks.removeSubscription(app.clientId);
  }, 30_000);

  it('npm run admin -- subscribe-webhook refuses an unsafe URL and stores nothing, then subscribes a local one and prints its secret once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dus-subscribe-'));
    try {
      writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
      // This process has the service's environment; TABLE_NAME would send the tool to AWS.
      const env = { STATE_DIR: stateDir, TABLE_NAME: '' };
      const clientId = `app-${randomUUID()}`;
      await repos.clients.createClient({
        clientId, secretHash: 'x', name: 'CLI app', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
        developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
      });
      const refused = await runTool('local/admin.ts', ['subscribe-webhook', '--client', clientId, '--url', 'https://10.0.0.1/hook'], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('public Internet address');
      expect(await webhooks.getSubscription(clientId)).toBeUndefined();

      const first = await runTool('local/admin.ts', ['subscribe-webhook', '--client', clientId, '--url', 'http://127.0.0.1:9/hook'], env);
      expect(first.code, first.stderr).toBe(0);
      const printed = JSON.parse(first.stdout) as { created: boolean; secret?: string };
      expect(printed).toMatchObject({ client: clientId, url: 'http://127.0.0.1:9/hook', created: true, secret: expect.stringMatching(/^whsec_/) });
      expect((await webhooks.getSubscription(clientId))!.secrets.map((x) => x.secret)).toEqual([printed.secret]);
      const again = await runTool('local/admin.ts', ['subscribe-webhook', '--client', clientId, '--url', 'http://127.0.0.1:10/hook'], env);
      expect(JSON.parse(again.stdout)).toEqual({ client: clientId, url: 'http://127.0.0.1:10/hook', created: false });
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the URL is checked again at delivery: a stored loopback https URL gets nothing sent', async () => {
    const hook = await receiver();
    const { clientId } = await subscribedApp(hook.url);
    // As if the host name had come to resolve to this machine after registration.
    await webhooks.setUrl(clientId, hook.url.replace('http://', 'https://'));
    await putDevice({ place: 'Rebound' });
    await service.webhooks!.settled();
    const delivery = (await webhooks.listDeliveries(clientId)).find((d) => d.eventType === 'device.updated');
    expect(delivery).toMatchObject({ lastError: 'address refused' });
    expect(hook.received).toEqual([]);
    await webhooks.removeSubscription(clientId);
  });
});
