import { once } from 'node:events';
import { connect as tlsConnect } from 'node:tls';
import mqtt, { type MqttClient } from 'mqtt';
import { iot, mqtt as crtMqtt } from 'aws-iot-device-sdk-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalCa, type DeviceCredentials, type LocalCa } from '#local/iot-ca';
import { startIotBroker, MAX_PAYLOAD_BYTES, type IotBroker, type LifecycleMessage } from '#local/iot-broker';
import { runPresenceRule } from '#local/iot-rules';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { useTable, useTestService } from '../support/service';
import { makeDevice } from '../support/factories';
import { connectedOf, lifecycleRecorded, listedDevice } from '../support/iot-devices';

// Devices connecting to the local IoT Core stand-in with their certificates (mqtt.js, and a bare
// TLS socket for the keep-alive): presence reaches GET /devices through the presence rule's function;
// what IoT Core's device policy refuses is refused.
const [ALICE] = DEMO_USERS;

describe('the local IoT broker', () => {
  const service = useTestService();
  // Ten seconds per DynamoDB attempt: on a loaded machine a retried PutItem would find its own first attempt's item.
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  let ca: LocalCa;
  let broker: IotBroker;
  const revoked = new Set<string>();
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    ca = await createLocalCa();
    broker = await startIotBroker({ ca, revoked, onLifecycleEvent: (event) => runPresenceRule(event) });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await broker?.stop();
  });

  /** A new device of Alice's with its credentials. */
  async function device(): Promise<DeviceCredentials> {
    const made = makeDevice({ connected: false });
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(ALICE.user.id, made);
    return ca.issue(made.id);
  }
  const refusalOf = (c: MqttClient) => new Promise<Error & { code?: number }>((resolve) => c.once('error', resolve));
  function client(creds: DeviceCredentials, clientId = creds.thingName, keepalive = 30) {
    const c = mqtt.connect(broker.url, { clientId, key: creds.keyPem, cert: creds.certPem, ca: ca.certPem, keepalive, reconnectPeriod: 0, protocolVersion: 4 });
    clients.push(c);
    return c;
  }

  it('a device connecting with its certificate shows connected in GET /devices, and disconnected when it leaves', async () => {
    const creds = await device();
    const connected = lifecycleRecorded(broker, creds.thingName, 'connected');
    const c = client(creds);
    await connectedOf(c);
    const [event, result] = await connected;
    expect(result).toEqual({ outcome: 'applied' });
    expect(Object.keys(event).sort()).toEqual(['clientId', 'eventType', 'ipAddress', 'principalIdentifier', 'sessionIdentifier', 'timestamp', 'versionNumber']);
    expect(event).toMatchObject({ clientId: creds.thingName, principalIdentifier: creds.certificateId, versionNumber: 1 });
    expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: true });

    const gone = lifecycleRecorded(broker, creds.thingName, 'disconnected');
    await c.endAsync();
    expect((await gone)[0]).toMatchObject({ disconnectReason: 'CLIENT_INITIATED_DISCONNECT', clientInitiatedDisconnect: true, versionNumber: 1 });
    expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: false });
  });

  it('AWS\'s own device SDK (aws-iot-device-sdk-v2, mutual TLS) connects a device: presence reaches GET /devices', async () => {
    const creds = await device();
    const connected = lifecycleRecorded(broker, creds.thingName, 'connected');
    const config = iot.AwsIotMqttConnectionConfigBuilder.new_mtls_builder(creds.certPem, creds.keyPem)
      .with_certificate_authority(ca.certPem).with_endpoint('127.0.0.1').with_port(broker.port)
      .with_client_id(creds.thingName).with_clean_session(true).with_keep_alive_seconds(30).build();
    const connection = new crtMqtt.MqttClient().new_connection(config);
    let open = false;
    try {
      open = await connection.connect();
      expect((await connected)[1]).toEqual({ outcome: 'applied' });
      expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: true });
      const gone = lifecycleRecorded(broker, creds.thingName, 'disconnected');
      await connection.disconnect();
      open = false;
      expect((await gone)[0]).toMatchObject({ disconnectReason: 'CLIENT_INITIATED_DISCONNECT' });
      expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: false });
    } finally {
      if (open) await connection.disconnect().catch(() => undefined);
    }
  });

  it('a device that goes silent is shown disconnected after 1.5 times its keep-alive (MQTT_KEEP_ALIVE_TIMEOUT)', async () => {
    const creds = await device();
    const connected = lifecycleRecorded(broker, creds.thingName, 'connected');
    const gone = lifecycleRecorded(broker, creds.thingName, 'disconnected');
    // A bare MQTT 3.1.1 CONNECT with a keep-alive of 1 s, then silence: no PINGREQ ever.
    const id = Buffer.from(creds.thingName);
    const body = Buffer.concat([Buffer.from([0, 4]), Buffer.from('MQTT'), Buffer.from([4, 2, 0, 1, 0, id.length]), id]);
    const socket = tlsConnect({ host: '127.0.0.1', port: broker.port, key: creds.keyPem, cert: creds.certPem, ca: ca.certPem });
    try {
      await once(socket, 'secureConnect');
      socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body]));
      // Applied: the device was shown connected (how long before the timeout depends on the machine's load, so not read here).
      expect((await connected)[1]).toEqual({ outcome: 'applied' });
      expect((await gone)[0]).toMatchObject({ disconnectReason: 'MQTT_KEEP_ALIVE_TIMEOUT', clientInitiatedDisconnect: false });
      expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: false });
    } finally {
      socket.destroy();
    }
  });

  it('refuses another device\'s client id, a revoked certificate, another device\'s topics and an oversized payload', async () => {
    const mine = await device();
    const theirs = await device();
    const impostor = client(mine, theirs.thingName);
    const refusal = await refusalOf(impostor);
    expect(refusal.code).toBe(5);

    const revokedCreds = await device();
    revoked.add(revokedCreds.certificateId);
    const revokedRefusal = await refusalOf(client(revokedCreds));
    expect(revokedRefusal.code).toBe(5);

    const c = client(mine);
    await connectedOf(c);
    expect((await c.subscribeAsync(`devices/${mine.thingName}/commands`)).map((g) => g.qos)).toEqual([0]);
    // Another device's filter is granted 0x80 (failure), and the connection stays.
    await expect(c.subscribeAsync(`devices/${theirs.thingName}/commands`)).rejects.toMatchObject({ packet: { granted: [128] } });
    await c.publishAsync(`devices/${mine.thingName}/state`, '{"ok":true}', { qos: 1 });
    const gone = lifecycleRecorded(broker, mine.thingName, 'disconnected');
    c.publish(`devices/${mine.thingName}/state`, Buffer.alloc(MAX_PAYLOAD_BYTES + 1), { qos: 0 });
    expect((await gone)[0]).toMatchObject({ disconnectReason: 'CLIENT_ERROR' });

    const again = client(mine);
    await connectedOf(again);
    const goneAgain = lifecycleRecorded(broker, mine.thingName, 'disconnected');
    again.publish(`devices/${theirs.thingName}/state`, '{}', { qos: 0 });
    expect((await goneAgain)[0]).toMatchObject({ disconnectReason: 'AUTH_ERROR', versionNumber: 2 });
    // Nothing of the other device changed.
    expect(await listedDevice(service, ALICE.user.id, theirs.thingName)).toMatchObject({ connected: false });
  });

  it('replayed and reordered lifecycle events leave the right state', async () => {
    const creds = await device();
    broker.hold();
    const first = client(creds);
    await connectedOf(first);
    await first.endAsync();
    const second = client(creds);
    await connectedOf(second);
    // Held: connect 1, disconnect 1, connect 2. Delivered reversed, each twice.
    const delivered: string[] = [];
    const listener = (event: LifecycleMessage, result: unknown) => void delivered.push(`${event.eventType} ${event.versionNumber} ${JSON.stringify(result)}`);
    broker.events.on('recorded', listener);
    await broker.release((held) => [...held].reverse().flatMap((event) => [event, event]));
    broker.events.off('recorded', listener);
    expect(delivered).toEqual([
      'connected 2 {"outcome":"applied"}', 'connected 2 {"outcome":"stale"}',
      'disconnected 1 {"outcome":"stale"}', 'disconnected 1 {"outcome":"stale"}',
      'connected 1 {"outcome":"stale"}', 'connected 1 {"outcome":"stale"}',
    ]);
    expect(await listedDevice(service, ALICE.user.id, creds.thingName)).toMatchObject({ connected: true });
  });
});
