import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { createServer, type TLSSocket } from 'node:tls';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { DEVICE_TOPIC_ROOT } from '#shared/domain/presence';
import type { LocalCa } from '#local/iot-ca';
import type { FleetStandIn } from '#local/iot-fleet';
import { createShadowStore, shadowRequestOf, shadowTopic, type ShadowStore, type ShadowUpdate } from '#local/iot-shadow';

// A local stand-in for AWS IoT Core's MQTT broker, for what presence needs: aedes in-process behind
// TLS with client certificates of a local CA (local/iot-ca.ts), refusing what the stack's device
// policy refuses, and publishing connect and disconnect lifecycle events with IoT Core's fields to
// the presence rule (what the caller hands as `onLifecycleEvent`, e.g. local/iot-rules.ts); and the
// Device Shadow service's MQTT topics (local/iot-shadow.ts), each device its own thing's only, as the
// device policy allows.

/** IoT Core's largest MQTT payload (AWS IoT Core quotas: 128 KB per message). */
export const MAX_PAYLOAD_BYTES = 128 * 1024;

/** A connect or disconnect lifecycle event, with the JSON fields IoT Core publishes. */
export type LifecycleMessage = Record<string, string | number | boolean>;

export interface IotBrokerOptions {
  ca: LocalCa;
  /** The presence rule's action: called once per lifecycle event, in the order they are released. */
  onLifecycleEvent(event: LifecycleMessage): Promise<unknown>;
  /** Ids (certificateId) of revoked certificates: refused at CONNECT, as an INACTIVE certificate is. */
  revoked?: ReadonlySet<string>;
  /** Fleet provisioning by claim (local/iot-fleet.ts): claim certificates, and the certificates it attached to things. */
  fleet?: FleetStandIn;
  /**
   * The thing a certificate is attached to in the registry (local/iot-registry.ts), which the client
   * id must be; a certificate the registry does not know names its thing by its subject's CN.
   */
  thingOf?(certificateId: string): string | undefined;
  /** The shadow service (default: a fresh one), shared with the data-plane stand-in (local/iot-data-plane.ts). */
  shadows?: ShadowStore;
}

export interface IotBroker {
  /** `mqtts://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Emits `recorded` (event, the rule's result) after each lifecycle event has been handled. */
  events: EventEmitter;
  /** The Device Shadow service behind the `$aws/things/<thing>/shadow/…` topics. */
  shadows: ShadowStore;
  /**
   * Tests: holds back lifecycle events until `release`, which hands the held ones to the rule in the
   * order `arrange` gives them (e.g. reversed, or each twice), as IoT Core may deliver them.
   */
  hold(): void;
  release(arrange?: (held: LifecycleMessage[]) => LifecycleMessage[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the broker on 127.0.0.1 (port 0: a free one). */
export async function startIotBroker(options: IotBrokerOptions, port = 0): Promise<IotBroker> {
  const events = new EventEmitter();
  const versions = new Map<string, number>();
  const connections = new WeakMap<Client, { version: number; session: string; principal: string; reason?: string; claim?: boolean }>();
  // Fleet provisioning's answers, each for the one connection that asked (by topic and payload).
  const replies = new Map<string, Client>();
  const replyKey = (topic: string, payload: Buffer | string) => `${topic}\n${payload.toString()}`;
  let held: LifecycleMessage[] | undefined;
  let pending = Promise.resolve();
  const shadows = options.shadows ?? createShadowStore();

  const deliver = (event: LifecycleMessage) => {
    pending = pending.then(async () => {
      const result = await options.onLifecycleEvent(event).catch((error: unknown) => ({ error: String(error) }));
      events.emit('recorded', event, result);
    });
    return pending;
  };
  const emit = (event: LifecycleMessage) => (held ? void held.push(event) : void deliver(event));

  const peer = (client: Client) => (client.conn as TLSSocket).getPeerCertificate?.(true);
  const broker = new Aedes({
    authenticate(client, _username, _password, done) {
      const cert = peer(client);
      const principal = cert?.raw ? createHash('sha256').update(cert.raw).digest('hex') : '';
      // A claim certificate connects with any client id, for fleet provisioning only (the claim policy);
      // a device's, by the device policy, only as client/<thing name>, the certificate attached to that thing.
      const claim = options.fleet?.isClaim(principal) === true;
      const thing = options.thingOf?.(principal) ?? options.fleet?.thingOf(principal) ?? cert?.subject?.CN;
      if (!cert?.subject || !(claim || thing === client.id) || options.revoked?.has(principal)) {
        const error = new Error('Not authorized') as AuthenticateError;
        error.returnCode = 5;
        done(error, false);
        return;
      }
      const version = (versions.get(client.id) ?? 0) + 1;
      versions.set(client.id, version);
      connections.set(client, { version, session: randomUUID(), principal, ...(claim ? { claim } : {}) });
      done(null, true);
    },
    authorizePublish(client, packet, done) {
      const connection = client && connections.get(client);
      // A claim certificate: the fleet provisioning API only. A device: its own topics, and the requests (update, get, delete) of its own thing's shadow.
      const own = client && (connection?.claim
        ? options.fleet!.allows(packet.topic, true)
        : packet.topic.startsWith(`${DEVICE_TOPIC_ROOT}/${client.id}/`) || shadowRequestOf(packet.topic)?.thing === client.id);
      if (connection && !own) connection.reason = 'AUTH_ERROR';
      if (connection && packet.payload.length > MAX_PAYLOAD_BYTES) connection.reason = 'CLIENT_ERROR';
      done(own && packet.payload.length <= MAX_PAYLOAD_BYTES ? null : new Error('publish refused'));
    },
    authorizeSubscribe(client, subscription, done) {
      // A refused filter is granted 0x80 in the SUBACK, as IoT Core answers it.
      const allowed = connections.get(client)?.claim
        ? options.fleet!.allows(subscription.topic, false)
        : subscription.topic.startsWith(`${DEVICE_TOPIC_ROOT}/${client.id}/`) || subscription.topic.startsWith(`${shadowTopic(client.id)}/`);
      done(null, allowed ? subscription : null);
    },
    authorizeForward(client, packet) {
      const target = replies.get(replyKey(packet.topic, packet.payload));
      return target === undefined || target === client ? packet : null;
    },
  });
  // Responses go out in the order the shadow service made them (one chain), at QoS 1.
  let publishing = Promise.resolve();
  const publish = (topic: string, body: unknown) => {
    publishing = publishing.then(() => new Promise<void>((resolve) => {
      broker.publish({ cmd: 'publish', topic, payload: Buffer.from(JSON.stringify(body)), qos: 1, retain: false, dup: false }, () => resolve());
    }));
    return publishing;
  };
  // Every accepted update, whether a device's (MQTT) or the cloud's (the data-plane API), is published on its topics.
  const onUpdated = (thing: string, update: ShadowUpdate) => {
    const topic = `${shadowTopic(thing)}/update`;
    void publish(`${topic}/accepted`, update.accepted);
    if (update.delta) void publish(`${topic}/delta`, update.delta);
    void publish(`${topic}/documents`, update.documents);
  };
  shadows.events.on('updated', onUpdated);
  broker.on('publish', (packet, client) => {
    const request = client ? shadowRequestOf(packet.topic) : undefined;
    if (!request) return;
    const topic = `${shadowTopic(request.thing)}/${request.operation}`;
    const payload = packet.payload as Buffer;
    const result = request.operation === 'update' ? shadows.update(request.thing, payload)
      : request.operation === 'get' ? shadows.get(request.thing, payload) : shadows.delete(request.thing, payload);
    if ('error' in result) void publish(`${topic}/rejected`, result.error);
    else if (request.operation !== 'update') void publish(`${topic}/accepted`, result.ok);
  });
  await broker.listen();
  broker.on('publish', (packet, client) => {
    const connection = client ? connections.get(client) : undefined;
    if (!client || !connection?.claim) return;
    void options.fleet!.handle({
      clientId: client.id, claimCertificateId: connection.principal, topic: packet.topic, payload: packet.payload as Buffer,
      reply(topic, answer) {
        const payload = Buffer.from(JSON.stringify(answer));
        const key = replyKey(topic, payload);
        replies.set(key, client);
        broker.publish({ cmd: 'publish', topic, payload, qos: 0, retain: false, dup: false }, () => replies.delete(key));
      },
    });
  });
  broker.on('clientReady', (client) => {
    const connection = connections.get(client)!;
    emit({
      clientId: client.id, timestamp: Date.now(), eventType: 'connected', sessionIdentifier: connection.session,
      principalIdentifier: connection.principal, ipAddress: client.conn && 'remoteAddress' in client.conn ? String(client.conn.remoteAddress) : '',
      versionNumber: connection.version,
    });
  });
  broker.on('keepaliveTimeout', (client) => {
    const connection = connections.get(client);
    if (connection) connection.reason = 'MQTT_KEEP_ALIVE_TIMEOUT';
  });
  broker.on('clientDisconnect', (client) => {
    const connection = connections.get(client);
    if (!connection) return;
    const byClient = (client as unknown as { _disconnected?: boolean })._disconnected === true;
    emit({
      clientId: client.id, timestamp: Date.now(), eventType: 'disconnected', sessionIdentifier: connection.session,
      principalIdentifier: connection.principal, clientInitiatedDisconnect: byClient,
      disconnectReason: byClient ? 'CLIENT_INITIATED_DISCONNECT' : connection.reason ?? 'CONNECTION_LOST', versionNumber: connection.version,
    });
  });

  const server = createServer({
    ...(await options.ca.issueServer().then(({ certPem, keyPem }) => ({ cert: certPem, key: keyPem }))),
    ca: options.ca.certPem, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2',
  }, (socket) => broker.handle(socket));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  return {
    url: `mqtts://127.0.0.1:${address.port}`,
    port: address.port,
    events,
    shadows,
    hold() {
      held ??= [];
    },
    async release(arrange = (list) => list) {
      const list = held ?? [];
      held = undefined;
      for (const event of arrange(list)) void deliver(event);
      await pending;
    },
    async stop() {
      // The broker first: it ends its clients' connections, which the server waits for.
      shadows.events.off('updated', onUpdated);
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pending;
    },
  };
}
