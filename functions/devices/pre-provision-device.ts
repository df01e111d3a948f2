import { preProvision } from '#shared/runtime';

/**
 * Fleet provisioning's pre-provisioning hook (infra/constructs/fleet-provisioning.ts): IoT Core asks
 * it, synchronously, whether a device that registers with the template may become a thing; only a
 * serial of the factory's allow-list, once (shared/devices/fleet-provisioning.ts), named as its
 * device. A refusal returns normally; only a storage failure throws (IoT Core then refuses the
 * registration, and the device tries again). No HTTP route.
 */
export async function handler(event: unknown) {
  return preProvision(event);
}
