import type { DynamoDBStreamEvent } from 'aws-lambda';
import { syncDesiredState } from '#shared/runtime';

/**
 * Reads the table's stream (filtered to devices' changes: infra/constructs/device-shadow.ts) and
 * writes each owner's command of a device-side field (`active`, `sound`) to the device's shadow as
 * its desired state (shared/shadow/sync-desired.ts). A failure fails the batch, which the stream
 * hands over again, then to the on-failure queue; what was already written is not written again.
 * A device deleted with its account has its certificate deactivated. No HTTP route.
 */
export async function handler(event: DynamoDBStreamEvent) {
  return syncDesiredState(event.Records);
}
