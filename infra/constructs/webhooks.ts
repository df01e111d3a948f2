import { Duration, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { WEBHOOK_ENV } from '#shared/config';
import {
  DELIVERY_BATCH_SIZE, DELIVERY_FUNCTION_TIMEOUT_SECONDS, DELIVERY_MAX_CONCURRENCY, MAX_DELIVERY_ATTEMPTS, QUEUE_VISIBILITY_TIMEOUT_SECONDS,
} from '#shared/webhooks/deliver';
import { FAN_OUT_FILTER_PATTERNS } from '#shared/webhooks/stream-filter';
import { FAN_OUT_BATCH_SIZE, FAN_OUT_MAX_RECORD_AGE_SECONDS, FAN_OUT_RETRY_ATTEMPTS } from '#shared/webhooks/stream-failures';

export interface WebhooksProps {
  table: ITableV2;
  functions: ServiceFunctions;
}

/** How long a dead-lettered delivery is kept for an operator to look at or redrive (SQS's maximum). */
const DEAD_LETTER_RETENTION = Duration.days(14);

/**
 * The webhook pipeline: the table's stream, filtered to the records that can make events (the rest
 * invoke nothing) → fan-out-events (batches of up to 100 records, split in
 * two on an error so a poisonous record cannot hold the others back, retried for at most a day) →
 * the delivery queue → deliver-webhooks (batches of 10, at most DELIVERY_MAX_CONCURRENCY at once,
 * partial batch failures: a failed delivery comes back after its own backoff) → after MAX_DELIVERY_ATTEMPTS receives, the dead-letter queue,
 * whose first message raises an alarm (Monitoring's `WebhookDeadLetters`). A stream batch the fan-out
 * failed on every retry (or older than FAN_OUT_MAX_RECORD_AGE_SECONDS) is not lost: Lambda sends its
 * description (shard and sequence-number range, not the records) to the stream-failures queue, whose
 * first message raises `WebhookStreamFailures`; `npm run admin -- replay-stream-failures` reads the
 * range again from the stream (which keeps records 24 hours) and fans it out (docs/operations.md).
 */
export class Webhooks extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly streamFailures: Queue;
  readonly fanOut: ServiceFunction;
  readonly deliver: ServiceFunction;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    this.queue = new Queue(this, 'Deliveries', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(QUEUE_VISIBILITY_TIMEOUT_SECONDS),
      // Longer than the retry schedule (29.7 to 35.7 hours), so no message expires before its last attempt.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: MAX_DELIVERY_ATTEMPTS },
    });
    this.streamFailures = new Queue(this, 'StreamFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    Validations.of(this.streamFailures).acknowledge({
      id: 'AwsSolutions-SQS3', reason: 'It is the on-failure destination of the fan-out\'s stream event source mapping: itself a dead-letter queue.',
    });
    const environment = { [WEBHOOK_ENV.queueUrl]: this.queue.queueUrl };

    this.fanOut = props.functions.eventSourceFunction('fan-out-events', { environment, queue: this.queue });
    this.fanOut.addEventSource(new DynamoEventSource(props.table, {
      startingPosition: StartingPosition.LATEST,
      batchSize: FAN_OUT_BATCH_SIZE,
      maxBatchingWindow: Duration.seconds(0),
      bisectBatchOnError: true,
      retryAttempts: FAN_OUT_RETRY_ATTEMPTS,
      // Half the stream's 24 hours: a batch given up on is still in the stream for 12 hours at least, to be replayed.
      maxRecordAge: Duration.seconds(FAN_OUT_MAX_RECORD_AGE_SECONDS),
      // Lambda sends the failed batch's description here (and grants the function sqs:SendMessage on it).
      onFailure: new SqsDlq(this.streamFailures),
      // Only the records that can make events (devices, consents removed, families revoked) invoke it.
      filters: FAN_OUT_FILTER_PATTERNS.map((pattern) => FilterCriteria.filter(pattern)),
    }));

    this.deliver = props.functions.eventSourceFunction('deliver-webhooks', {
      environment, queue: this.queue, timeoutSeconds: DELIVERY_FUNCTION_TIMEOUT_SECONDS,
    });
    // At most DELIVERY_MAX_CONCURRENCY invocations at once: beyond it messages wait in the queue
    // (their receive count, the attempt number, unchanged) rather than being received and throttled.
    // No reserved concurrency: a new account (10 concurrent executions) could not deploy the stack
    // with any (Lambda keeps the account's unreserved concurrency at its minimum), and reserving
    // the mapping's maximum would take it from the API for good (docs/operations.md).
    this.deliver.addEventSource(new SqsEventSource(this.queue, {
      batchSize: DELIVERY_BATCH_SIZE, reportBatchItemFailures: true, maxConcurrency: DELIVERY_MAX_CONCURRENCY,
    }));
  }
}
