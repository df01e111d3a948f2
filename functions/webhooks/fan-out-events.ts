import type { DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '#shared/log';
import { fanOut } from '#shared/runtime';

/**
 * Reads the table's stream (DynamoDB Streams, new and old images) and turns the changes of devices,
 * consents and token families into webhook deliveries: one delivery item and one queue message per
 * event and subscribed application (shared/webhooks/fan-out.ts). A failure fails the batch, which
 * the stream hands over again; webhook ids derive from the records, so nothing is sent twice under
 * two ids. No HTTP route.
 */
export async function handler(event: DynamoDBStreamEvent) {
  const queued = await fanOut(event.Records);
  if (queued > 0) logger.info('webhook deliveries queued', { records: event.Records.length, queued });
  return { queued };
}
