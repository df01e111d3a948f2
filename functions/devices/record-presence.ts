import { recordPresence } from '#shared/runtime';

/**
 * The device presence topic rule's action (infra/constructs/device-presence.ts): AWS IoT Core's
 * connect and disconnect lifecycle events, one per invocation (the rule's `SELECT *`), become the
 * device's `connected` and `last_connection` (shared/presence/record-presence.ts). A dropped event
 * returns normally with its reason; only a storage failure throws, and the asynchronous invocation
 * is retried. No HTTP route.
 */
export async function handler(event: unknown) {
  return { outcome: await recordPresence(event) };
}
