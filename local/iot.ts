import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalCa, type LocalCa } from '#local/iot-ca';
import { startIotBroker, type IotBroker } from '#local/iot-broker';
import { createFleetStandIn, LOCAL_FLEET_TEMPLATE } from '#local/iot-fleet';
import { startIotRegistry, type IotRegistry } from '#local/iot-registry';
import { startDataPlane, type DataPlaneStandIn } from '#local/iot-data-plane';
import { startLocalDesiredState, type LocalDesiredState } from '#local/device-shadow';
import { createShadowStore, type ShadowUpdate } from '#local/iot-shadow';
import { runPresenceRule, runProvisioningHook, runReportsRule } from '#local/iot-rules';
import { SHADOW_ENV } from '#shared/config';
import type { StreamSource } from '#local/stream-reader';

/** The local IoT Core stand-in of a running service, and where its devices' credentials are. */
export interface LocalIot {
  broker: IotBroker;
  /** This run's CA: it issues the devices' certificates (tests issue their own devices' too). */
  ca: LocalCa;
  /** The registry stand-in (local/iot-registry.ts): provisioning and deactivation, through the real IoT SDK client. */
  registry: IotRegistry;
  /** The shadows' data-plane HTTP API (what the desired-state function calls). */
  dataPlane: DataPlaneStandIn;
  /** The table's stream → the shadows' desired state, with its on-failure queue. */
  desiredState: LocalDesiredState;
  /** `<state dir>/iot`: `ca.pem`, `<device id>.cert.pem` / `<device id>.key.pem` per device, and the factory's claim certificate (`claim.cert.pem` / `claim.key.pem`). */
  credentialsDir: string;
  /** The provisioning template a device with the claim certificate registers with. */
  fleetTemplate: string;
  /** Resolves once every command so far reached the shadows and every report so far was recorded. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** Where a device's certificate and key are in `credentialsDir`. */
export const credentialFiles = (credentialsDir: string, deviceId: string) => ({
  ca: join(credentialsDir, 'ca.pem'), cert: join(credentialsDir, `${deviceId}.cert.pem`), key: join(credentialsDir, `${deviceId}.key.pem`),
});

/**
 * Starts the broker stand-in (local/iot-broker.ts) and the registry's (local/iot-registry.ts,
 * whose deactivated certificates the broker refuses) on free ports of 127.0.0.1; behind the broker the
 * presence rule's function runs as the topic rule runs it in AWS, with a fresh CA, and writes the
 * credentials of `deviceIds` (as an operator hands them to a device) to `<stateDir>/iot`, removed
 * when it stops. With the shadows: the data-plane stand-in (IOT_DATA_ENDPOINT names it to the
 * handlers), the reports rule's function on every shadow update's documents (one at a time, in
 * order; the broker's `events` emit `reported` (thing, documents, result) after each), and the table's
 * stream read for the owners' commands. Call it once the handlers' environment is set.
 */
export async function startLocalIot(stateDir: string, deviceIds: readonly string[], table: StreamSource): Promise<LocalIot> {
  const ca = await createLocalCa();
  const credentialsDir = join(stateDir, 'iot');
  mkdirSync(credentialsDir, { recursive: true });
  writeFileSync(join(credentialsDir, 'ca.pem'), ca.certPem);
  for (const id of deviceIds) {
    const creds = await ca.issue(id);
    const files = credentialFiles(credentialsDir, id);
    writeFileSync(files.cert, creds.certPem);
    writeFileSync(files.key, creds.keyPem, { mode: 0o600 });
  }
  // The factory's claim certificate, shared by a batch: it may only ask for a certificate of the device's own (fleet provisioning).
  const claim = await ca.issue('fleet-claim');
  const claimFiles = credentialFiles(credentialsDir, 'claim');
  writeFileSync(claimFiles.cert, claim.certPem);
  writeFileSync(claimFiles.key, claim.keyPem, { mode: 0o600 });
  // The certificates the registry deactivates: the broker refuses them at CONNECT.
  const revoked = new Set<string>();
  const registry = await startIotRegistry(ca, revoked);
  const fleet = createFleetStandIn({
    ca, claimCertificates: new Set([claim.certificateId]), preProvisioningHook: runProvisioningHook, registry,
  });
  const shadows = createShadowStore();
  const dataPlane = await startDataPlane(shadows);
  process.env[SHADOW_ENV.dataEndpoint] = dataPlane.url;
  const broker = await startIotBroker({ ca, revoked, fleet, shadows, thingOf: registry.thingOf, onLifecycleEvent: (event) => runPresenceRule(event) });
  let reports = Promise.resolve();
  shadows.events.on('updated', (thing: string, update: ShadowUpdate) => {
    reports = reports.then(async () => {
      const result = await runReportsRule(thing, update.documents).catch((error: unknown) => ({ error: String(error) }));
      broker.events.emit('reported', thing, update.documents, result);
    });
  });
  const desiredState = await startLocalDesiredState(table);
  // The credentials are this run's (a fresh CA each start): they go with the broker.
  return {
    broker, ca, registry, dataPlane, desiredState, credentialsDir, fleetTemplate: LOCAL_FLEET_TEMPLATE,
    async settled() {
      await desiredState.settled();
      await reports;
    },
    async stop() {
      await desiredState.stop();
      await broker.stop();
      await reports;
      await Promise.all([dataPlane.stop(), registry.stop()]);
      shadows.events.removeAllListeners();
      rmSync(credentialsDir, { recursive: true, force: true });
    },
  };
}
