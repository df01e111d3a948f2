import { recordReport } from '#shared/runtime';

/**
 * The device reports topic rule's action (infra/constructs/device-shadow.ts): a shadow's documents
 * message (`SELECT *, topic(3) AS thingName`), one per invocation, becomes the device's `active`,
 * `sound`, `version` and location (shared/shadow/record-report.ts). A dropped message returns
 * normally with its reason; only a storage failure throws, and the asynchronous invocation is
 * retried. No HTTP route.
 */
export async function handler(event: unknown) {
  return { outcome: await recordReport(event) };
}
