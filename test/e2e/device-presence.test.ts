import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { runPresenceRule } from '#local/iot-rules';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { formatTimestamp } from '#shared/domain/time';
import { tokenFor, useTable, useTestService } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';
import { makeDevice } from '../support/factories';

// Presence end to end on the local service: a lifecycle event as IoT Core publishes it, through the
// presence rule's function (as the topic rule invokes it), to `GET /devices` and, through the table's
// stream and the webhook pipeline, to a device.connection_changed at a subscribed application.
const [ALICE] = DEMO_USERS;

describe('device presence', () => {
  const service = useTestService({ webhooks: { timeScale: 1e-4 } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  const event = (type: 'connected' | 'disconnected', clientId: string, versionNumber: number, timestamp: number) => ({
    clientId, timestamp, eventType: type, sessionIdentifier: randomUUID(), principalIdentifier: 'f'.repeat(64), versionNumber,
    ...(type === 'connected' ? { ipAddress: '192.0.2.7' } : { clientInitiatedDisconnect: false, disconnectReason: 'MQTT_KEEP_ALIVE_TIMEOUT' }),
  });
  async function listedDevice(id: string) {
    const token = await tokenFor(service, ALICE.user.id, ['read_device']);
    const res = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string; connected: boolean; last_connection: string }[]).find((d) => d.id === id);
  }

  it('a connect reaches GET /devices and a webhook; a keep-alive timeout shows the device disconnected at once', async () => {
    const hook = await startReceiver();
    stops.push(hook.stop);
    const clientId = `app-${randomUUID()}`;
    await repos.clients.createClient({
      clientId, secretHash: 'x', name: 'Presence app', description: '', website: 'https://example.com', redirectUris: ['https://example.com/cb'],
      developerId: ALICE.user.id, developerName: 'Alice', createdAt: new Date().toISOString(),
    });
    await repos.grants.saveConsent({ userId: ALICE.user.id, clientId, scopes: ['read_device'], grantedAt: formatTimestamp(new Date()) });
    await createWebhookRepo({ doc, table: service.tableName }).setUrl(clientId, hook.url);
    const device = makeDevice({ connected: false });
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(ALICE.user.id, device);
    const at = Date.now() - 1000;

    expect(await runPresenceRule(event('connected', device.id, 1, at))).toEqual({ outcome: 'applied' });
    expect(await listedDevice(device.id)).toMatchObject({ connected: true, last_connection: formatTimestamp(new Date(at)) });
    const connected = await hook.next((r) => r.body.includes(device.id) && r.body.includes('device.connection_changed') && r.body.includes('"connected":true'), 20_000);
    expect(JSON.parse(connected.body)).toMatchObject({ type: 'device.connection_changed', data: { device_id: device.id, connected: true } });

    // A repeat of the connect, late, changes nothing.
    expect(await runPresenceRule(event('connected', device.id, 1, at))).toEqual({ outcome: 'stale' });
    expect(await runPresenceRule(event('disconnected', device.id, 1, at + 500))).toEqual({ outcome: 'applied' });
    expect(await listedDevice(device.id)).toMatchObject({ connected: false, last_connection: formatTimestamp(new Date(at)) });
    const gone = await hook.next((r) => r.body.includes(device.id) && r.body.includes('device.connection_changed') && r.body.includes('"connected":false'), 20_000);
    expect(JSON.parse(gone.body)).toMatchObject({ type: 'device.connection_changed', data: { device_id: device.id, connected: false } });
  });

  it('an event of a client id that names no device, or a malformed one, is dropped and writes nothing', async () => {
    const before = await listedDevice(ALICE.devices[0].id);
    expect(await runPresenceRule(event('disconnected', randomUUID(), 9, Date.now()))).toEqual({ outcome: 'unknown-device' });
    expect(await runPresenceRule({ ...event('disconnected', ALICE.devices[0].id, 9, Date.now()), versionNumber: 'nine' })).toEqual({ outcome: 'bad-version-number' });
    expect(await listedDevice(ALICE.devices[0].id)).toEqual(before);
  });
});
