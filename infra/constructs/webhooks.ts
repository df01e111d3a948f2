import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { WEBHOOK_ENV } from '#shared/config';
import {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS, MAX_DELIVERY_ATTEMPTS, QUEUE_VISIBILITY_TIMEOUT_SECONDS,
} from '#shared/webhooks/deliver';

export interface WebhooksProps {
  table: ITableV2;
  functions: ServiceFunctions;
}

/** How long a dead-lettered delivery is kept for an operator to look at or redrive (SQS's maximum). */
const DEAD_LETTER_RETENTION = Duration.days(14);

/**
 * The webhook pipeline: the table's stream → fan-out-events (batches of up to 100 records, split in
 * two on an error so a poisonous record cannot hold the others back, retried for at most a day) →
 * the delivery queue → deliver-webhooks (batches of 10, partial batch failures: a failed delivery
 * comes back after its own backoff) → after MAX_DELIVERY_ATTEMPTS receives, the dead-letter queue,
 * whose first message raises an alarm (`alarmOn`).
 */
export class Webhooks extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
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
      // Longer than the retry schedule (about 28 to 33 hours), so no message expires before its last attempt.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: MAX_DELIVERY_ATTEMPTS },
    });
    const environment = { [WEBHOOK_ENV.queueUrl]: this.queue.queueUrl };

    this.fanOut = props.functions.eventSourceFunction('fan-out-events', { environment, queue: this.queue });
    this.fanOut.addEventSource(new DynamoEventSource(props.table, {
      startingPosition: StartingPosition.LATEST,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(0),
      bisectBatchOnError: true,
      retryAttempts: 10,
      maxRecordAge: Duration.days(1),
    }));

    this.deliver = props.functions.eventSourceFunction('deliver-webhooks', {
      environment, queue: this.queue, timeoutSeconds: DELIVERY_FUNCTION_TIMEOUT_SECONDS,
    });
    this.deliver.addEventSource(new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true }));
  }

  /** An alarm as soon as a delivery is dead-lettered: a receiver failed for more than a day. */
  alarmOn(topic: ITopic): Alarm {
    const alarm = new Alarm(this, 'DeadLetterAlarm', {
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: 'A webhook delivery failed every attempt for more than a day and was dead-lettered: its receiver is down (the console shows it; '
        + 'the developer is e-mailed when it has failed for days).',
    });
    alarm.addAlarmAction(new SnsAction(topic));
    return alarm;
  }
}
