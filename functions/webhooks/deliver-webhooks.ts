import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/log';
import { QUEUE_VISIBILITY_TIMEOUT_SECONDS, type DeliveryOutcome } from '#shared/webhooks/deliver';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { deliverMessage, queue } from '#shared/runtime';

/**
 * Delivers the queued webhook messages of one SQS batch, all at once (a slow receiver holds up
 * none of the others beyond its 5 s), through shared/webhooks/deliver.ts. A failed delivery comes
 * back after its backoff (its visibility timeout is set to it) and is reported as a batch item
 * failure; after the last attempt the queue's redrive policy moves it to the dead-letter queue.
 * Should SQS refuse the backoff (ChangeMessageVisibility), the message is still reported as failed,
 * so SQS keeps it: it comes back after the queue's visibility timeout, its next attempt early, and
 * the refusal is logged as an error. No HTTP route.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures: string[] = [];
  await Promise.all(event.Records.map(async (record) => {
    let message: WebhookMessage;
    try {
      message = JSON.parse(record.body) as WebhookMessage;
    } catch {
      logger.warn('webhook message is not JSON; dropped', { messageId: record.messageId });
      return;
    }
    const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
    const about = { clientId: message.clientId, webhookId: message.webhookId, attempt };
    let outcome: DeliveryOutcome;
    try {
      outcome = await deliverMessage(message, attempt);
    } catch (error) {
      // Our side failed (the table): the message comes back after the queue's visibility timeout.
      failures.push(record.messageId);
      logger.error('webhook delivery could not be handled', { ...about, error });
      return;
    }
    if (outcome.result === 'done') return;
    // Not deleted, whatever happens next: a failure SQS keeps, and receives again.
    failures.push(record.messageId);
    logger.info('webhook delivery failed', { ...about, next: outcome });
    if (outcome.result !== 'retry') return;
    try {
      await queue.retryAfter(record.receiptHandle, outcome.delaySeconds);
    } catch (error) {
      // The attempt is recorded; without its backoff the next one comes after the queue's visibility
      // timeout. The error's name and message only (SQS may quote the receipt handle: cut out), no URL or payload.
      const { name, message: reason } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      logger.error('webhook retry delay not set; the message comes back after the queue\'s visibility timeout', {
        ...about, delaySeconds: outcome.delaySeconds, backAfterSeconds: QUEUE_VISIBILITY_TIMEOUT_SECONDS,
        error: { name, message: reason.replaceAll(record.receiptHandle, '<receipt handle>') },
      });
    }
  }));
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
}
