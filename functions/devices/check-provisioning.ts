import { checkProvisioning } from '#shared/runtime';

/**
 * The fleet provisioning template's pre-provisioning hook (infra/constructs/device-fleet.ts): IoT
 * Core hands it each RegisterThing request of a device that connected with the factory's claim
 * certificate, and provisions the device only if it answers `allowProvisioning: true`
 * (shared/fleet/pre-provisioning.ts: a listed serial, once). No HTTP route.
 */
export async function handler(request: unknown) {
  return checkProvisioning(request);
}
