import { IoTDataPlaneClient, GetThingShadowCommand, UpdateThingShadowCommand } from '@aws-sdk/client-iot-data-plane';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { runReportsRule } from '#local/iot-rules';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { tokenFor, useTable, useTestService } from '../support/service';
import { makeDevice } from '../support/factories';

// The Device Shadow service of the local IoT Core stand-in, as a device (mqtt.js) and the cloud (the
// AWS SDK's data-plane client) see it: IoT Core's documented answers (versions, clientToken, rejected
// updates with their codes, the 8 KB limit, deltas, documents), and bad input from devices rejected on
// the shadow's rejected topic or dropped by the reports rule with nothing written to the table.
const [ALICE] = DEMO_USERS;

describe('the local device shadow', () => {
  const service = useTestService({ webhooks: false, iot: true });
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  const clients: MqttClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
  });

  async function device(overrides = {}) {
    const made = makeDevice({ sound: true, active: false, ...overrides });
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(ALICE.user.id, made);
    const creds = await service.iot!.ca.issue(made.id);
    const c = mqtt.connect(service.iot!.broker.url, { clientId: made.id, key: creds.keyPem, cert: creds.certPem, ca: service.iot!.ca.certPem, reconnectPeriod: 0, protocolVersion: 4 });
    clients.push(c);
    await new Promise<void>((resolve, reject) => {
      c.once('connect', () => resolve());
      c.once('error', reject);
    });
    const root = `$aws/things/${made.id}/shadow`;
    await c.subscribeAsync(`${root}/#`, { qos: 1 });
    const received: { topic: string; body: any }[] = [];
    // The device's own requests come back too (it subscribed to its whole shadow): only the answers are kept.
    c.on('message', (topic, payload) => /\/(accepted|rejected|delta|documents)$/.test(topic) && received.push({ topic, body: JSON.parse(payload.toString()) }));
    /** The next message on `<root>/<suffix>` after the call. */
    const next = async (suffix: string, send: () => unknown) => {
      const from = received.length;
      await send();
      const until = Date.now() + 10_000;
      for (;;) {
        const found = received.slice(from).find((m) => m.topic === `${root}/${suffix}`);
        if (found) return found.body;
        if (Date.now() > until) throw new Error(`nothing on ${suffix}; got ${received.slice(from).map((m) => m.topic).join(', ')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const publish = (op: string, body: unknown) => c.publishAsync(`${root}/${op}`, typeof body === 'string' ? body : JSON.stringify(body), { qos: 1 });
    return { made, c, root, received, next, publish };
  }
  const shown = async (id: string) => {
    const token = await tokenFor(service, ALICE.user.id, ['read_device']);
    const res = await fetch(`${service.apiUrl}/devices/${id}`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as Record<string, unknown>[])[0];
  };

  it('versions, clientToken, delta and documents as IoT Core publishes them', async () => {
    const d = await device();
    expect(await d.next('get/rejected', () => d.publish('get', { clientToken: 'g1' }))).toMatchObject({ code: 404, clientToken: 'g1' });
    const first = await d.next('update/accepted', () => d.publish('update', { state: { reported: { sound: true } }, clientToken: 'a1' }));
    expect(first).toMatchObject({ state: { reported: { sound: true } }, version: 1, clientToken: 'a1', metadata: { reported: { sound: { timestamp: expect.any(Number) } } } });
    const delta = await d.next('update/delta', () => d.publish('update', { state: { desired: { sound: false } }, clientToken: 'a2' }));
    expect(delta).toMatchObject({ state: { sound: false }, version: 2, clientToken: 'a2' });
    // A report that does not match the desired value is told the delta again.
    expect(await d.next('update/delta', () => d.publish('update', { state: { reported: { sound: true, fan: 1 } } }))).toMatchObject({ state: { sound: false }, version: 3 });
    const documents = d.received.find((m) => m.topic === `${d.root}/update/documents` && m.body.current.version === 2)!.body;
    expect(documents).toMatchObject({ previous: { version: 1, state: { reported: { sound: true } } }, current: { version: 2, state: { desired: { sound: false }, reported: { sound: true } } } });
    expect(await d.next('update/rejected', () => d.publish('update', { state: { reported: { sound: false } }, version: 2, clientToken: 'a3' })))
      .toMatchObject({ code: 409, message: 'Version conflict', clientToken: 'a3' });
    const got = await d.next('get/accepted', () => d.publish('get', {}));
    expect(got).toMatchObject({ version: 3, state: { desired: { sound: false }, reported: { sound: true, fan: 1 }, delta: { sound: false } } });
    // A null removes a member; a version equal to the shadow's is accepted.
    expect(await d.next('update/accepted', () => d.publish('update', { state: { desired: { sound: null }, reported: { fan: null } }, version: 3 }))).toMatchObject({ version: 4 });
    expect((await d.next('get/accepted', () => d.publish('get', {}))).state).toEqual({ reported: { sound: true } });
  });

  it('malformed, ill-shaped, too deep and oversized updates are rejected with their codes, and nothing reaches the table', async () => {
    const d = await device();
    const before = await shown(d.made.id);
    const rejected = (body: unknown) => d.next('update/rejected', () => d.publish('update', body));
    expect(await rejected('{"state": ')).toMatchObject({ code: 400, message: 'Invalid JSON' });
    expect(await rejected({ clientToken: 'x' })).toMatchObject({ code: 400, message: 'Missing required node: state', clientToken: 'x' });
    expect(await rejected({ state: { reported: 'on' } })).toMatchObject({ code: 400, message: 'Reported node must be an object' });
    expect(await rejected({ state: { wanted: {} } })).toMatchObject({ code: 400 });
    expect(await rejected({ state: { reported: { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } } } })).toMatchObject({ code: 400, message: expect.stringContaining('nesting') });
    expect(await rejected({ state: { reported: { sound: false, blob: 'x'.repeat(8 * 1024) } } })).toMatchObject({ code: 413 });
    expect(await rejected({ state: { reported: {} }, clientToken: 'x'.repeat(65) })).toMatchObject({ code: 400, message: 'Invalid clientToken' });
    await service.iot!.settled();
    expect(await shown(d.made.id)).toEqual(before);
  });

  it('reports of the wrong type or a stale version are dropped by the reports rule, and nothing is written', async () => {
    const d = await device({ sound: true, version: '1.0.0' });
    const before = await shown(d.made.id);
    const outcomes: unknown[] = [];
    const listener = (thing: string, _documents: unknown, result: unknown) => thing === d.made.id && outcomes.push(result);
    service.iot!.broker.events.on('reported', listener);
    await d.next('update/accepted', () => d.publish('update', { state: { reported: { sound: 'loud' } } }));
    await d.next('update/accepted', () => d.publish('update', { state: { reported: { sound: null, version: 'x'.repeat(5_000) } } }));
    await d.next('update/accepted', () => d.publish('update', { state: { reported: { version: null, latitude: 91, longitude: 0 } } }));
    await service.iot!.settled();
    service.iot!.broker.events.off('reported', listener);
    expect(outcomes).toEqual([{ outcome: 'bad-sound' }, { outcome: 'bad-version' }, { outcome: 'bad-latitude' }]);
    expect(await shown(d.made.id)).toEqual(before);
    // A good report applies; the same shadow version again, or an older one, changes nothing.
    const documents = (version: number, sound: boolean) => ({ previous: { state: { reported: {} }, version: version - 1 }, current: { state: { reported: { sound } }, version } });
    expect(await runReportsRule(d.made.id, documents(50, false))).toEqual({ outcome: 'applied' });
    expect(await runReportsRule(d.made.id, documents(50, true))).toEqual({ outcome: 'stale' });
    expect(await runReportsRule(d.made.id, documents(49, true))).toEqual({ outcome: 'stale' });
    expect(await shown(d.made.id)).toMatchObject({ sound: false });
  });

  it('a report contradicting a newer desired state does not undo it; an unchanged report writes nothing', async () => {
    const d = await device({ sound: true });
    const documents = { current: { state: { desired: { sound: false, command: 9 }, reported: { sound: true, version: '3.0.0' } }, version: 7 } };
    expect(await runReportsRule(d.made.id, documents)).toEqual({ outcome: 'applied' });
    expect(await shown(d.made.id)).toMatchObject({ sound: true, version: '3.0.0' });
    const token = await tokenFor(service, ALICE.user.id, ['write_device']);
    await fetch(`${service.apiUrl}/devices/${d.made.id}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"sound":false}' });
    // The device, not yet told, reports its old sound and a new firmware: the owner's command stands,
    // whether the shadow's desired state already says otherwise (the member is left out)…
    const told = { state: { desired: { sound: false, command: 9 }, reported: { sound: true, version: '3.1.0', command: 1 } }, version: 8 };
    expect(await runReportsRule(d.made.id, { current: told })).toEqual({ outcome: 'applied' });
    expect(await shown(d.made.id)).toMatchObject({ sound: false, version: '3.1.0' });
    // …or the command has not reached the shadow yet (the device reports an older command than the owner's last).
    const before = { state: { reported: { sound: true, version: '3.2.0', command: 1 } }, version: 9 };
    expect(await runReportsRule(d.made.id, { current: before })).toEqual({ outcome: 'overridden' });
    expect(await shown(d.made.id)).toMatchObject({ sound: false, version: '3.2.0' });
    expect(await runReportsRule(d.made.id, { previous: before, current: { ...before, version: 10 } })).toEqual({ outcome: 'unchanged' });
  });

  it('the data-plane API through the AWS SDK: the cloud’s update reaches the device as a delta; a stale version is a ConflictException', async () => {
    const d = await device();
    const sdk = new IoTDataPlaneClient({ endpoint: service.iot!.dataPlane.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const delta = await d.next('update/delta', () => sdk.send(new UpdateThingShadowCommand({ thingName: d.made.id, payload: Buffer.from('{"state":{"desired":{"active":true}}}') })));
      expect(delta).toMatchObject({ state: { active: true }, version: 1 });
      const { payload } = await sdk.send(new GetThingShadowCommand({ thingName: d.made.id }));
      expect(JSON.parse(Buffer.from(payload!).toString())).toMatchObject({ version: 1, state: { desired: { active: true }, delta: { active: true } } });
      await expect(sdk.send(new UpdateThingShadowCommand({ thingName: d.made.id, payload: Buffer.from('{"state":{"desired":{"active":false}},"version":0}') })))
        .rejects.toMatchObject({ name: 'ConflictException' });
      await expect(sdk.send(new GetThingShadowCommand({ thingName: '00000000-0000-4000-8000-000000000000' }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    } finally {
      sdk.destroy();
    }
  });

  it('a device may not subscribe to another thing’s shadow (SUBACK 0x80)', async () => {
    const mine = await device();
    const other = await device();
    await expect(mine.c.subscribeAsync(`$aws/things/${other.made.id}/shadow/update/delta`, { qos: 1 })).rejects.toThrow(/Subscribe error/);
    expect(await mine.c.subscribeAsync(`${mine.root}/get/accepted`, { qos: 1 })).toMatchObject([{ qos: 1 }]);
  });
});
