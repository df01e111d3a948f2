import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalCa } from '#local/iot-ca';
import { startIotBroker, type IotBroker } from '#local/iot-broker';
import { createFleetStandIn, LOCAL_FLEET_TEMPLATE } from '#local/iot-fleet';
import { runPresenceRule, runProvisioningHook } from '#local/iot-rules';
import { startIotRegistry, type IotRegistry } from '#local/iot-registry';

/** The local IoT Core stand-in of a running service, and where its devices' credentials are. */
export interface LocalIot {
  broker: IotBroker;
  /** The registry stand-in (local/iot-registry.ts): provisioning and deactivation, through the real IoT SDK client. */
  registry: IotRegistry;
  /** `<state dir>/iot`: `ca.pem`, `<device id>.cert.pem` / `<device id>.key.pem` per device, and the factory's claim certificate (`claim.cert.pem` / `claim.key.pem`). */
  credentialsDir: string;
  /** The provisioning template a device with the claim certificate registers with. */
  fleetTemplate: string;
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
 * when it stops. Call it once the handlers' environment is set.
 */
export async function startLocalIot(stateDir: string, deviceIds: readonly string[]): Promise<LocalIot> {
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
    ca, claimCertificates: new Set([claim.certificateId]), preProvisioningHook: runProvisioningHook, attach: registry.attach,
  });
  const broker = await startIotBroker({ ca, revoked, fleet, thingOf: registry.thingOf, onLifecycleEvent: (event) => runPresenceRule(event) });
  // The credentials are this run's (a fresh CA each start): they go with the broker.
  return {
    broker, registry, credentialsDir, fleetTemplate: LOCAL_FLEET_TEMPLATE,
    stop: () => broker.stop().finally(() => registry.stop()).finally(() => rmSync(credentialsDir, { recursive: true, force: true })),
  };
}
