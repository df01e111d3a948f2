import { iot, iotshadow, mqtt as crtMqtt } from 'aws-iot-device-sdk-v2';
import type { DeviceCredentials } from '#local/iot-ca';

/** What the test device holds and has been told. */
export interface ShadowDevice {
  /** The device's own state: what it reports. */
  state: Record<string, unknown>;
  /** Every delta it received (live or from `get` at connection), in order. */
  deltas: Record<string, unknown>[];
  /** Resolves once the device's state matches `expected` (polling its own state). */
  reaches(expected: Record<string, unknown>, timeoutMs?: number): Promise<void>;
  /** Reports `reported` (and clears the desired members `clear` names: a button's local override). */
  report(reported: Record<string, unknown>, clear?: string[]): Promise<void>;
  /** Publishes an update of another thing's shadow (which the policy refuses). */
  client: iotshadow.IotShadowClient;
  disconnect(): Promise<void>;
}

/**
 * A device as firmware built on AWS's device SDK (aws-iot-device-sdk-v2, `iotshadow`) behaves: it
 * connects with its certificate, subscribes to its shadow's delta and get answers, reports its state
 * and asks for its shadow at connection (the delta it missed while offline), and obeys every delta by taking the
 * values and reporting its whole state, `command` included (the command it applied).
 */
export async function connectShadowDevice(creds: DeviceCredentials, ca: string, port: number, initial: Record<string, unknown> = {}): Promise<ShadowDevice> {
  const config = iot.AwsIotMqttConnectionConfigBuilder.new_mtls_builder(creds.certPem, creds.keyPem)
    .with_certificate_authority(ca).with_endpoint('127.0.0.1').with_port(port)
    .with_client_id(creds.thingName).with_clean_session(true).with_keep_alive_seconds(30).build();
  const connection = new crtMqtt.MqttClient().new_connection(config);
  await connection.connect();
  const thingName = creds.thingName;
  const client = new iotshadow.IotShadowClient(connection);
  const state: Record<string, unknown> = { ...initial };
  const deltas: Record<string, unknown>[] = [];
  const QOS = crtMqtt.QoS.AtLeastOnce;
  const report = async (reported: Record<string, unknown>, clear: string[] = []) => {
    Object.assign(state, reported);
    await client.publishUpdateShadow({
      thingName, state: { reported: { ...state }, ...(clear.length ? { desired: Object.fromEntries(clear.map((f) => [f, null])) } : {}) },
    }, QOS);
  };
  const obey = (delta: Record<string, unknown> | undefined) => {
    if (!delta) return;
    deltas.push(delta);
    void report(delta);
  };
  await client.subscribeToShadowDeltaUpdatedEvents({ thingName }, QOS, (error, event) => {
    if (!error) obey(event?.state as Record<string, unknown> | undefined);
  });
  const got = new Promise<void>((resolve) => {
    void client.subscribeToGetShadowRejected({ thingName }, QOS, () => resolve());
    void client.subscribeToGetShadowAccepted({ thingName }, QOS, (error, answer) => {
      if (!error) obey(answer?.state?.delta as Record<string, unknown> | undefined);
      resolve();
    });
  });
  // As firmware does at connection: what it is, then what it was told while away.
  await report({});
  await client.publishGetShadow({ thingName }, QOS);
  await got;
  return {
    state, deltas, client, report,
    async reaches(expected, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (!Object.entries(expected).every(([k, v]) => state[k] === v)) {
        if (Date.now() > until) throw new Error(`device state ${JSON.stringify(state)} never reached ${JSON.stringify(expected)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async disconnect() {
      await connection.disconnect();
    },
  };
}
