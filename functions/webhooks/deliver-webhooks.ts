import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/log';
import { deliverMessage } from '#shared/webhooks/deliver';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { allowLocalHttp, batch, grants, notifyDisabled, queue, webhooks } from '#shared/webhooks/runtime';

/**
 * Delivers the queued webhook messages of one SQS batch, all at once (a slow receiver holds up
 * none of the others beyond its 5 s), through shared/webhooks/deliver.ts. A failed delivery comes
 * back after its backoff (its visibility timeout is set to it) and is reported as a batch item
 * failure; after the last attempt the queue's redrive policy moves it to the dead-letter queue.
 * No HTTP route.
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
    try {
      const outcome = await deliverMessage(message, attempt, { batch, webhooks, grants, allowLocalHttp, notifyDisabled });
      if (outcome.result === 'retry') await queue.retryAfter(record.receiptHandle, outcome.delaySeconds);
      if (outcome.result !== 'done') {
        failures.push(record.messageId);
        logger.info('webhook delivery failed', { clientId: message.clientId, webhookId: message.webhookId, attempt, next: outcome });
      }
    } catch (error) {
      // Our side failed (the table, the queue): the message comes back after the queue's visibility timeout.
      failures.push(record.messageId);
      logger.error('webhook delivery could not be handled', { clientId: message.clientId, webhookId: message.webhookId, attempt, error });
    }
  }));
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
}
