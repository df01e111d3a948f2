import { randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { GetCommand } from '#shared/data/commands';
import { createDeviceRepo } from '#shared/data/device-repo';
import { deviceKey } from '#shared/data/item-keys';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { Browser, obtainCode } from '../support/oauth-client';
import { tokenFor, useTable, useTestService } from '../support/service';
import { connectShadowDevice, type ShadowDevice } from '../support/shadow-device';
import { startReceiver, type Received } from '../support/webhook-receiver';
import { makeDevice } from '../support/factories';

// Devices that obey, end to end on the local service, with AWS's device SDK (`iotshadow`) as the
// device: an owner's PUT through the table's stream and the desired-state function to the shadow's
// delta; the device's report through the reports rule to GET and a signed webhook.
const [ALICE] = DEMO_USERS;

describe('device shadow', () => {
  const service = useTestService({ webhooks: { timeScale: 1e-4 }, iot: true });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  async function newDevice(overrides = {}) {
    const device = makeDevice({ active: false, sound: true, ...overrides });
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(ALICE.user.id, device);
    return { device, creds: await service.iot!.ca.issue(device.id) };
  }
  async function online(creds: Awaited<ReturnType<typeof newDevice>>['creds'], initial: Record<string, unknown>): Promise<ShadowDevice> {
    const device = await connectShadowDevice(creds, service.iot!.ca.certPem, service.iot!.broker.port, initial);
    stops.push(() => device.disconnect().catch(() => undefined));
    return device;
  }
  const put = async (token: string, id: string, body: unknown) => {
    const res = await fetch(`${service.apiUrl}/devices/${id}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.status;
  };
  const get = async (token: string, id: string) => {
    const res = await fetch(`${service.apiUrl}/devices/${id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as Record<string, unknown>[])[0]!;
  };
  /** The OAuth flow's token: Alice signs in, consents, the demo client exchanges the code. */
  async function oauthToken(): Promise<string> {
    const { code, redirectUri } = await obtainCode(new Browser(service.authUrl), { scope: 'read_device write_device' });
    const res = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  it('a PUT through the OAuth flow’s token reaches the device; GET shows the command at once, with the specification’s fields and types', async () => {
    const { device, creds } = await newDevice();
    const thing = await online(creds, { active: false, sound: true });
    const token = await oauthToken();
    expect(await put(token, device.id, { sound: false, name: 'Hall' })).toBe(204);
    // Between the PUT and the device's confirmation, GET shows what the owner asked (the device is being brought to it).
    const shown = await get(token, device.id);
    expect(shown).toMatchObject({ sound: false, name: 'Hall', active: false });
    expect(Object.keys(shown)).toEqual(['id', 'name', 'place', 'version', 'last_connection', 'active', 'connected', 'reference', 'latitude', 'longitude', 'sound']);
    await thing.reaches({ sound: false });
    // Only the device-side field went to the device; the name stays in the table.
    expect(thing.deltas.at(-1)).toEqual({ sound: false, command: expect.any(Number) });
    await service.iot!.settled();
    expect(await get(token, device.id)).toMatchObject({ sound: false, name: 'Hall' });
  });

  it('a button press reaches GET and a verified device.updated webhook, and does not come back to the device as a command', async () => {
    const hook = await startReceiver();
    stops.push(hook.stop);
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: 'Shadow app', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    const { secret } = await createWebhookRepo({ doc, table: service.tableName }).setUrl(clientId, hook.url);
    const { device, creds } = await newDevice({ sound: true });
    const thing = await online(creds, { active: false, sound: true, version: device.version });

    await thing.report({ sound: false, version: '2.1.0' }, ['sound']);
    const got: Received = await hook.next((r) => r.body.includes(device.id) && r.body.includes('device.updated') && r.body.includes('"sound":false'), 20_000);
    const event = new StandardWebhook(secret!).verify(got.body, {
      'webhook-id': got.headers['webhook-id']!, 'webhook-timestamp': got.headers['webhook-timestamp']!, 'webhook-signature': got.headers['webhook-signature']!,
    }) as { type: string; data: { changes: Record<string, unknown> } };
    expect(event).toMatchObject({ type: 'device.updated', data: { device_id: device.id, changes: { sound: false, version: '2.1.0' } } });
    const token = await tokenFor(service, ALICE.user.id, ['read_device']);
    expect(await get(token, device.id)).toMatchObject({ sound: false, version: '2.1.0' });
    await service.iot!.settled();
    expect(thing.deltas).toEqual([]);
    expect(service.iot!.dataPlane.calls.filter((c) => c.endsWith(device.id))).toEqual([]);
  });

  it('a device offline during the PUT receives it at reconnection', async () => {
    const { device, creds } = await newDevice({ active: false });
    const token = await tokenFor(service, ALICE.user.id, ['read_device', 'write_device']);
    expect(await put(token, device.id, { active: true })).toBe(204);
    await service.iot!.settled();
    const thing = await online(creds, { active: false, sound: true });
    await thing.reaches({ active: true });
    expect(thing.deltas[0]).toMatchObject({ active: true });
  });

  it('100 alternating PUTs end with the device and the API agreeing on the last one', async () => {
    const { device, creds } = await newDevice({ sound: true });
    const thing = await online(creds, { active: false, sound: true });
    const token = await tokenFor(service, ALICE.user.id, ['read_device', 'write_device']);
    for (let i = 0; i < 100; i++) expect(await put(token, device.id, { sound: i % 2 === 1 })).toBe(204);
    // The last PUT's command number, which the device reports once it has applied it.
    const { Item } = await doc.send(new GetCommand({ TableName: service.tableName, Key: deviceKey(ALICE.user.id, device.id) }));
    // Its last report may cross the last command (its earlier report arriving after it): the shadow then
    // tells it again, so it ends on the last command's value.
    await thing.reaches({ command: Item!.commandSeq, sound: true }, 60_000);
    // Its reports reach the table through the rule, after the device has them.
    const until = Date.now() + 20_000;
    while ((await get(token, device.id)).sound !== true && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await get(token, device.id)).toMatchObject({ sound: true });
  }, 120_000);

  it('a device cannot update another device’s shadow', async () => {
    const mine = await newDevice();
    const other = await newDevice({ sound: true });
    const thing = await online(mine.creds, { sound: true });
    await thing.client.publishUpdateShadow({ thingName: other.device.id, state: { reported: { sound: false } } }, 1).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await service.iot!.settled();
    const token = await tokenFor(service, ALICE.user.id, ['read_device']);
    expect(await get(token, other.device.id)).toMatchObject({ sound: true });
    expect('error' in service.iot!.broker.shadows.get(other.device.id)).toBe(true);
  });
});
