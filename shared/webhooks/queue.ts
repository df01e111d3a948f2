import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';
import { optionalEnv, WEBHOOK_ENV } from '#shared/config';

/** What a delivery-queue message says: which delivery item to send. The item holds the payload. */
export interface WebhookMessage {
  clientId: string;
  webhookId: string;
  /** "Send again" from the console: deliver even if it was delivered before. */
  redelivery?: boolean;
}

/**
 * The delivery queue as the pipeline uses it: SQS in AWS, the local queue stand-in
 * (local/webhook-queue.ts) in the local service. Both hand the messages to the same delivery
 * handler, which decides the retry delay of a failed one (`retryAfter`).
 */
export interface WebhookQueue {
  send(messages: readonly WebhookMessage[]): Promise<void>;
  /** The message (by its receipt handle) comes back after `seconds` (SQS: its visibility timeout). */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
}

/** SendMessageBatch takes at most 10 messages. */
const SQS_BATCH = 10;

export function createSqsWebhookQueue(queueUrl: string, client = observeClient(new SQSClient(awsClientConfig()))): WebhookQueue {
  return {
    async send(messages) {
      for (let start = 0; start < messages.length; start += SQS_BATCH) {
        const chunk = messages.slice(start, start + SQS_BATCH);
        const { Failed = [] } = await client.send(new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((message, i) => ({ Id: String(i), MessageBody: JSON.stringify(message) })),
        }));
        // Throwing makes the caller's invocation fail and run again: the delivery items exist, the ids are the same.
        if (Failed.length > 0) throw new Error(`SQS refused ${Failed.length} webhook message(s): ${Failed[0]?.Code ?? 'unknown'}`);
      }
    },
    async retryAfter(receiptHandle, seconds) {
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
    },
  };
}

let localQueue: WebhookQueue | undefined;

/** The local service registers its queue stand-in here; the handlers of the same process find it. */
export function useLocalWebhookQueue(queue: WebhookQueue | undefined): void {
  localQueue = queue;
}

let fromEnv: WebhookQueue | undefined;

/** SQS when WEBHOOK_QUEUE_URL is set (AWS), else the local stand-in; throws when there is neither. */
export function webhookQueueFromEnv(): WebhookQueue {
  const url = optionalEnv(WEBHOOK_ENV.queueUrl);
  if (url) return (fromEnv ??= createSqsWebhookQueue(url));
  if (localQueue) return localQueue;
  throw new Error(`Missing required environment variable ${WEBHOOK_ENV.queueUrl}`);
}
