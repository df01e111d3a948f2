import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { awsClientConfig, localEndpointConfig, observeClient } from '#shared/aws/client-config';

/** What a delivery-queue message says: which delivery item to send. The item holds the payload. */
export interface WebhookMessage {
  clientId: string;
  webhookId: string;
  /** A device event's owner: the delivery happens only while this user's grant to the application covers it. */
  userId?: string;
  /** "Send again" from the console: deliver even if it was delivered before. */
  redelivery?: boolean;
}

/**
 * The delivery queue as the pipeline uses it: SQS (in AWS, or the local queue stand-in, which
 * speaks SQS's protocol). Both hand the messages to the same delivery handler, which decides the
 * retry delay of a failed one (`retryAfter`).
 */
export interface WebhookQueue {
  send(messages: readonly WebhookMessage[]): Promise<void>;
  /** The message (by its receipt handle) comes back after `seconds` (SQS: its visibility timeout). */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
}

/** SendMessageBatch takes at most 10 messages. */
const SQS_BATCH = 10;

export function createSqsWebhookQueue(queueUrl: string, client: SQSClient): WebhookQueue {
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

/**
 * The delivery queue at `queueUrl` through a new SQS client: SQS in AWS; given `endpoint` (the local
 * service), the same client sent to the local queue stand-in (local/webhook-queue.ts) in `region`.
 */
export function sqsWebhookQueue(queueUrl: string, endpoint?: string, region?: string): WebhookQueue {
  return createSqsWebhookQueue(queueUrl, observeClient(new SQSClient({ ...awsClientConfig(), ...localEndpointConfig(endpoint, region) })));
}
