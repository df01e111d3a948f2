import { randomUUID } from 'node:crypto';
import { GetCommand } from '#shared/data/commands';
import mqtt, { type MqttClient } from 'mqtt';
import { iot, iotidentity, mqtt as crtMqtt } from 'aws-iot-device-sdk-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalCa, type DeviceCredentials, type LocalCa } from '#local/iot-ca';
import { startIotBroker, type IotBroker } from '#local/iot-broker';
import { createFleetStandIn, LOCAL_FLEET_TEMPLATE } from '#local/iot-fleet';
import { runPresenceRule, runProvisioningHook } from '#local/iot-rules';
import { DEMO_USERS } from '#local/seed';
import { createClaimRepo } from '#shared/data/claim-repo';
import { deviceKey } from '#shared/data/item-keys';
import { createSerialRepo } from '#shared/data/serial-repo';
import { claimDevice } from '#shared/devices/claiming';
import { newClaimCode } from '#shared/domain/claim-code';
import { hashSecret } from '#shared/secrets';
import { useTable, useTestService } from '../support/service';
import { makeDevice } from '../support/factories';
import { connectedOf, lifecycleRecorded, listedDevice } from '../support/iot-devices';

// Fleet provisioning by claim over IoT Core's MQTT API, as a device made in bulk does it with AWS's
// own device SDK (aws-iot-device-sdk-v2's identity client) against the local IoT Core stand-in: the
// factory's claim certificate asks for a certificate of the device's own and registers it with the
// device's serial; the pre-provisioning hook's function admits a listed serial once; its owner
// claims it with the label's code; the new certificate connects as the device, and presence reaches
// GET /devices. (test/e2e/fleet-provisioning.test.ts holds the hook and the allow-list to the rest.)
const [ALICE] = DEMO_USERS;

describe('fleet provisioning by claim', () => {
  const service = useTestService();
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  let ca: LocalCa;
  let claim: DeviceCredentials;
  let broker: IotBroker;
  const clients: MqttClient[] = [];
  const connections: crtMqtt.MqttClientConnection[] = [];

  beforeAll(async () => {
    ca = await createLocalCa();
    claim = await ca.issue('fleet-claim');
    const fleet = createFleetStandIn({ ca, claimCertificates: new Set([claim.certificateId]), preProvisioningHook: runProvisioningHook });
    broker = await startIotBroker({ ca, fleet, onLifecycleEvent: (event) => runPresenceRule(event) });
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.disconnect().catch(() => undefined)));
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await broker?.stop();
  });

  /** A serial on the allow-list, naming a device that belongs to nobody yet, with its label's claim code (as allow-serials makes them). */
  async function listedSerial() {
    const serial = `SN-${randomUUID().slice(0, 8)}`;
    const device = makeDevice({ connected: false });
    const claimCode = newClaimCode();
    await createClaimRepo({ doc, table: service.tableName }).createUnclaimedDevice(device, hashSecret(claimCode));
    await createSerialRepo({ doc, table: service.tableName }).allowSerial(serial, device.id);
    return { serial, deviceId: device.id, claimCode };
  }
  /** A device at its first start: connected with the claim certificate through the SDK, its identity client ready. */
  async function factoryDevice(clientId = `factory-${randomUUID()}`) {
    const config = iot.AwsIotMqttConnectionConfigBuilder.new_mtls_builder(claim.certPem, claim.keyPem)
      .with_certificate_authority(ca.certPem).with_endpoint('127.0.0.1').with_port(broker.port)
      .with_client_id(clientId).with_clean_session(true).with_keep_alive_seconds(30).build();
    const connection = new crtMqtt.MqttClient().new_connection(config);
    connections.push(connection);
    await connection.connect();
    return new iotidentity.IotIdentityClient(connection);
  }
  /** The first message of `subscribe`'s topic, accepted or rejected, whichever comes. */
  function firstAnswer<A, R>(subscribeAccepted: (handler: (e?: unknown, r?: A) => void) => Promise<unknown>, subscribeRejected: (handler: (e?: unknown, r?: R) => void) => Promise<unknown>) {
    let settle!: (answer: { accepted?: A; rejected?: R }) => void;
    const answer = new Promise<{ accepted?: A; rejected?: R }>((resolve) => (settle = resolve));
    const subscribed = Promise.all([
      subscribeAccepted((_e, r) => settle({ accepted: r })),
      subscribeRejected((_e, r) => settle({ rejected: r })),
    ]);
    return { subscribed, answer };
  }
  async function createKeys(identity: iotidentity.IotIdentityClient) {
    const { subscribed, answer } = firstAnswer<iotidentity.model.CreateKeysAndCertificateResponse, iotidentity.model.ErrorResponse>(
      (h) => identity.subscribeToCreateKeysAndCertificateAccepted({}, crtMqtt.QoS.AtLeastOnce, h),
      (h) => identity.subscribeToCreateKeysAndCertificateRejected({}, crtMqtt.QoS.AtLeastOnce, h),
    );
    await subscribed;
    await identity.publishCreateKeysAndCertificate({}, crtMqtt.QoS.AtLeastOnce);
    const { accepted } = await answer;
    expect(accepted?.certificateOwnershipToken).toBeTruthy();
    return accepted!;
  }
  async function register(identity: iotidentity.IotIdentityClient, token: string, parameters: Record<string, string>) {
    const templateName = LOCAL_FLEET_TEMPLATE;
    const { subscribed, answer } = firstAnswer<iotidentity.model.RegisterThingResponse, iotidentity.model.ErrorResponse>(
      (h) => identity.subscribeToRegisterThingAccepted({ templateName }, crtMqtt.QoS.AtLeastOnce, h),
      (h) => identity.subscribeToRegisterThingRejected({ templateName }, crtMqtt.QoS.AtLeastOnce, h),
    );
    await subscribed;
    await identity.publishRegisterThing({ templateName, certificateOwnershipToken: token, parameters }, crtMqtt.QoS.AtLeastOnce);
    return answer;
  }
  function client(certPem: string, keyPem: string, clientId: string) {
    const c = mqtt.connect(broker.url, { clientId, key: keyPem, cert: certPem, ca: ca.certPem, keepalive: 30, reconnectPeriod: 0, protocolVersion: 4 });
    clients.push(c);
    return c;
  }

  it('a device of a listed serial gets its own certificate and thing, its owner claims it, and it connects as its device, shown connected', async () => {
    const { serial, deviceId, claimCode } = await listedSerial();
    const identity = await factoryDevice();
    const keys = await createKeys(identity);
    // Not attached to a thing yet: the new certificate connects as nothing.
    const early = client(keys.certificatePem!, keys.privateKey!, deviceId);
    await expect(connectedOf(early)).rejects.toMatchObject({ code: 5 });

    const { accepted, rejected } = await register(identity, keys.certificateOwnershipToken!, { SerialNumber: serial });
    expect(rejected).toBeUndefined();
    expect(accepted).toEqual({ deviceConfiguration: {}, thingName: deviceId });
    // Alice types the label's code on her devices page.
    const claimed = await claimDevice({ claims: createClaimRepo({ doc, table: service.tableName }) }, claimCode, ALICE.user.id, '192.0.2.7');
    expect(claimed).toMatchObject({ device: { id: deviceId } });

    const connected = lifecycleRecorded(broker, deviceId, 'connected');
    const device = client(keys.certificatePem!, keys.privateKey!, deviceId);
    await connectedOf(device);
    expect((await connected)[1]).toEqual({ outcome: 'applied' });
    expect(await listedDevice(service, ALICE.user.id, deviceId)).toMatchObject({ connected: true });
    // As that device only.
    const other = client(keys.certificatePem!, keys.privateKey!, randomUUID());
    await expect(connectedOf(other)).rejects.toMatchObject({ code: 5 });
  });

  it('provisions a device its owner claimed from its label before its first start: the certificate is recorded on the owned device', async () => {
    const { serial, deviceId, claimCode } = await listedSerial();
    expect(await claimDevice({ claims: createClaimRepo({ doc, table: service.tableName }) }, claimCode, ALICE.user.id, '192.0.2.7')).toMatchObject({ device: { id: deviceId } });
    const identity = await factoryDevice();
    const keys = await createKeys(identity);
    expect(await register(identity, keys.certificateOwnershipToken!, { SerialNumber: serial })).toEqual({ accepted: { deviceConfiguration: {}, thingName: deviceId } });
    const { Item } = await doc.send(new GetCommand({ TableName: service.tableName, Key: deviceKey(ALICE.user.id, deviceId), ConsistentRead: true }));
    expect(Item).toMatchObject({ certificateId: keys.certificateId });
  });

  it('refuses a serial nobody listed, a listed serial a second time, a forged ownership token and malformed parameters', async () => {
    const identity = await factoryDevice();
    const unlisted = await createKeys(identity);
    expect((await register(identity, unlisted.certificateOwnershipToken!, { SerialNumber: 'SN-NOT-LISTED' })).rejected)
      .toMatchObject({ statusCode: 403, errorCode: 'AccessDenied' });
    expect((await register(identity, unlisted.certificateOwnershipToken!, {})).rejected).toMatchObject({ statusCode: 403 });

    const { serial } = await listedSerial();
    const first = await createKeys(identity);
    expect((await register(identity, first.certificateOwnershipToken!, { SerialNumber: serial })).accepted).toBeDefined();
    // Another certificate for the same serial: a copied serial, or the claim certificate in other hands.
    const second = await createKeys(identity);
    expect((await register(identity, second.certificateOwnershipToken!, { SerialNumber: serial })).rejected).toMatchObject({ statusCode: 403 });
    // The first token was used up; a made-up one is nobody's.
    expect((await register(identity, first.certificateOwnershipToken!, { SerialNumber: serial })).rejected).toMatchObject({ errorCode: 'InvalidCertificateOwnershipToken' });
    expect((await register(identity, 'forged', { SerialNumber: serial })).rejected).toMatchObject({ errorCode: 'InvalidCertificateOwnershipToken' });
  });

  it('answers each request on its own connection only, and lets a claim certificate use nothing but this API', async () => {
    const { deviceId } = await listedSerial();
    const asking = await factoryDevice();
    // Another device of the batch listens where the answers go: it gets no one else's private key.
    const listener = client(claim.certPem, claim.keyPem, `factory-${randomUUID()}`);
    await connectedOf(listener);
    const overheard: string[] = [];
    listener.on('message', (topic) => overheard.push(topic));
    await listener.subscribeAsync('$aws/certificates/create/json/accepted');
    await createKeys(asking);
    // A round trip of the listener's own after the answer: anything forwarded to it has arrived by then.
    const ownAnswer = new Promise((resolve) => listener.once('message', resolve));
    await listener.publishAsync('$aws/certificates/create/json', '{}', { qos: 1 });
    await ownAnswer;
    expect(overheard).toEqual(['$aws/certificates/create/json/accepted']);

    // No device topic, to publish or subscribe, and no other template.
    await expect(listener.subscribeAsync(`devices/${deviceId}/commands`)).rejects.toMatchObject({ packet: { granted: [128] } });
    await expect(listener.subscribeAsync('$aws/provisioning-templates/other/provision/json/accepted')).rejects.toMatchObject({ packet: { granted: [128] } });
    const gone = lifecycleRecorded(broker, listener.options.clientId!, 'disconnected');
    listener.publish(`devices/${deviceId}/state`, '{}', { qos: 0 });
    expect((await gone)[0]).toMatchObject({ disconnectReason: 'AUTH_ERROR' });
  });
});
