import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm, AlarmStatusWidget, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TreatMissingData, type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { AccountMail } from '#infra/constructs/account-mail';
import { pascal } from '#infra/constructs/construct-ids';
import { chunks, FIVE_MINUTES, sumOf } from '#infra/constructs/metric-math';
import { METRIC, METRIC_DIMENSION, type MetricName } from '#shared/metrics';

export interface MonitoringProps {
  /** Both HTTP APIs, named as the route table names them. */
  apis: (HttpApi & { api: string })[];
  functions: IFunction[];
  table: ITableV2;
  mail: AccountMail;
  /** Where the functions write their business metrics (shared/metrics.ts). */
  metricsNamespace: string;
  /** E-mailed when an alarm fires or clears (a subscription the recipient must confirm). */
  alarmEmail?: string;
  /** The webhook deliveries' dead-letter queue (infra/constructs/webhooks.ts). */
  webhookDeadLetters?: IQueue;
  /** The fan-out's on-failure destination: the stream batches it gave up on (infra/constructs/webhooks.ts). */
  webhookStreamFailures?: IQueue;
  /**
   * Each failures queue of a function invoked asynchronously: a scheduled function's runs that failed
   * every try (ServiceFunctions.scheduledFunction), the presence rule's events (DevicePresence), with what its alarm says.
   */
  scheduledFailures?: { fn: string; queue: IQueue; description?: string }[];
}

/** The DynamoDB operations the service sends (shared/data/): its throttling and system-error metrics are per operation. */
export const TABLE_OPERATIONS = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'BatchGetItem', 'TransactWriteItems'] as const;

/** An alarm on a metric math expression may read at most 10 metrics (CloudWatch "Limits", a hard limit). */
const METRICS_PER_ALARM = 10;

/**
 * The operator's view: one SNS topic every alarm notifies (and its optional e-mail subscriber), the
 * alarms, and one dashboard. Each threshold's reason is beside it; docs/design.md has the table.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'Device and User Service alarms', enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason: 'Alarm notifications carry alarm names and metric values only; CloudWatch cannot publish to a topic encrypted with the '
        + 'AWS managed SNS key, and a customer managed key for this alone would cost more than the data is worth protecting.',
    });
    // A topic policy replaces SNS's default one, and enforceSSL's holds only a Deny: without this
    // statement CloudWatch may not publish, and no alarm would ever notify. Only this account's alarms
    // may ("Amazon SNS topic policy for CloudWatch alarms", CloudWatch User Guide).
    const { partition, region, account } = Stack.of(this);
    this.topic.addToResourcePolicy(new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [this.topic.topicArn],
      conditions: {
        ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
        StringEquals: { 'aws:SourceAccount': account },
      },
    }));
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);
    const alarm = (alarmId: string, options: {
      metric: IMetric; threshold: number; evaluationPeriods: number; datapointsToAlarm?: number; description: string;
    }) => {
      const { description, ...props } = options;
      const created = new Alarm(this, alarmId, {
        ...props,
        // What the alarm means and what to do, in its notification.
        alarmDescription: description,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // Every metric here is a count of bad events or a rate over traffic: no data means none happened.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    // API 5xx rate, per API: 1 % of requests over two of three 5-minute periods, once there are 20
    // requests in the period (below that, one error is a large percentage of nothing).
    for (const httpApi of props.apis) {
      alarm(`${pascal(httpApi.api)}Api5xxRate`, {
        metric: new MathExpression({
          expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
          usingMetrics: {
            errors: httpApi.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
            requests: httpApi.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
          },
          label: `${httpApi.api} API 5xx %`,
          period: FIVE_MINUTES,
        }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        description: `The ${httpApi.api} API answered 5xx to 1 % or more of its requests in two of the last three 5-minute periods.`,
      });
    }

    // Lambda errors (a crash, timeout or out-of-memory: handlers answer every expected failure
    // themselves) and throttles (the account's concurrency is exhausted), summed over the functions
    // in alarms of at most 10 metrics each.
    const groups = chunks(props.functions, METRICS_PER_ALARM);
    groups.forEach((group, index) => {
      // Ids unique across groups: the dashboard graphs them together.
      const sum = (metricOf: (fn: IFunction) => Metric, label: string, prefix: string) =>
        sumOf(Object.fromEntries(group.map((fn, i) => [`${prefix}${index}_${i}`, metricOf(fn)])), label);
      const part = groups.length > 1 ? ` (group ${index + 1} of ${groups.length})` : '';
      alarm(`LambdaErrors${index + 1}`, {
        metric: sum((fn) => fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }), `Lambda errors${part}`, 'e'),
        threshold: 5,
        evaluationPeriods: 1,
        description: `Five or more function errors in 5 minutes${part}: an isolated timeout does not page, a failing deployment does.`,
      });
      alarm(`LambdaThrottles${index + 1}`, {
        metric: sum((fn) => fn.metricThrottles({ statistic: 'Sum', period: FIVE_MINUTES }), `Lambda throttles${part}`, 't'),
        threshold: 1,
        evaluationPeriods: 1,
        description: `A function was throttled${part}: the account's concurrency is exhausted and callers got errors.`,
      });
    });

    // DynamoDB: throttled requests (on demand, a hot partition or a surge beyond twice the previous
    // peak) and system errors (DynamoDB's own 500s, which the SDK retries; what remains reaches users as 503).
    const perOperation = (metricName: string, prefix: string, label: string) => sumOf(Object.fromEntries(TABLE_OPERATIONS.map((operation) => [
      `${prefix}${operation.toLowerCase()}`,
      props.table.metric(metricName, { dimensionsMap: { TableName: props.table.tableName, Operation: operation }, statistic: 'Sum', period: FIVE_MINUTES }),
    ])), label);
    alarm('TableThrottles', {
      metric: perOperation('ThrottledRequests', 'throttled_', 'DynamoDB throttled requests'),
      threshold: 5,
      evaluationPeriods: 1,
      description: 'Five or more DynamoDB requests throttled in 5 minutes.',
    });
    alarm('TableSystemErrors', {
      metric: perOperation('SystemErrors', 'errors_', 'DynamoDB system errors'),
      threshold: 5,
      evaluationPeriods: 1,
      description: 'Five or more DynamoDB system errors in 5 minutes.',
    });

    // KMS publishes no error metric for a key: the signer counts its own failures (KmsErrors). One in
    // each of two consecutive periods: a throttling blip does not page, a disabled or denied key does.
    const business = (name: MetricName, period = FIVE_MINUTES) => new Metric({
      namespace: props.metricsNamespace, metricName: name, dimensionsMap: { [METRIC_DIMENSION.name]: METRIC_DIMENSION.value },
      statistic: 'Sum', period,
    });
    alarm('KmsErrors', {
      metric: business(METRIC.kmsErrors),
      threshold: 1,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      description: 'kms:Sign or kms:GetPublicKey failed in each of two consecutive 5-minute periods: tokens cannot be issued or verified.',
    });

    // SES reviews an account whose bounce rate reaches 5 % and may pause its sending at 10 %: alarm
    // at 5 % of at least 20 messages in 6 hours (account mail is sparse; fewer is not a rate).
    const mailPeriod = Duration.hours(6);
    alarm('EmailBounceRate', {
      metric: new MathExpression({
        expression: 'IF(sent >= 20, 100 * bounces / sent, 0)',
        usingMetrics: { bounces: props.mail.metric('Bounce', mailPeriod), sent: props.mail.metric('Send', mailPeriod) },
        label: 'Bounce %',
        period: mailPeriod,
      }),
      threshold: 5,
      evaluationPeriods: 1,
      description: '5 % or more of account e-mail bounced in 6 hours (at least 20 sent): SES puts an account under review at 5 %.',
    });

    const queueAlarm = (alarmId: string, queue: IQueue, description: string) => alarm(alarmId, {
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: 1, evaluationPeriods: 1, description,
    });
    // A webhook delivery that failed every attempt for more than a day: its receiver is down.
    if (props.webhookDeadLetters) {
      queueAlarm('WebhookDeadLetters', props.webhookDeadLetters, 'A webhook delivery failed all its attempts (more than a day) and was '
        + 'dead-lettered: a receiver is down. The console shows the delivery; its developer is e-mailed when the receiver has failed for days.');
    }
    // Table changes the fan-out gave up on: their events were not delivered, and the stream keeps them for a while only.
    if (props.webhookStreamFailures) {
      queueAlarm('WebhookStreamFailures', props.webhookStreamFailures, 'The webhook fan-out gave up on a batch of table changes (every retry '
        + 'failed, or the records grew 12 hours old): their events were not delivered. Replay them within 12 hours, while the stream keeps '
        + 'the records: npm run admin -- replay-stream-failures (docs/operations.md).');
    }
    // A scheduled run (the signing-key rotation) that failed every try, or whose event could not be
    // delivered: the hourly rule would otherwise fail quietly until a key is overdue.
    for (const { fn, queue, description } of props.scheduledFailures ?? []) {
      queueAlarm(`${pascal(fn)}Failures`, queue, description ?? `A scheduled run of ${fn} failed all its tries (or EventBridge could not invoke it): `
        + 'its event is in the failures queue; the function\'s logs say why.');
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(6) });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) => new GraphWidget({ title, left, right, width: 8, height: 6 });
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(...props.apis.map((httpApi) => graph(`${httpApi.api} API`, [
      httpApi.metricCount({ statistic: 'Sum', period: FIVE_MINUTES, label: 'requests' }),
      httpApi.metricClientError({ statistic: 'Sum', period: FIVE_MINUTES, label: '4xx' }),
      httpApi.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES, label: '5xx' }),
    ], [httpApi.metricLatency({ statistic: 'p99', period: FIVE_MINUTES, label: 'p99 latency (ms)' })])),
    graph('Tokens and accounts', [
      business(METRIC.tokensIssued), business(METRIC.signUps), business(METRIC.emailsSent),
    ]));
    this.dashboard.addWidgets(
      graph('Security events', [
        business(METRIC.loginFailures), business(METRIC.loginThrottled), business(METRIC.refreshTokenReuse), business(METRIC.grantsRevoked),
      ]),
      graph('Account e-mail (SES)', (['Send', 'Delivery', 'Bounce', 'Complaint', 'Reject'] as const).map((event) => props.mail.metric(event))),
      graph('Lambda errors and throttles', this.alarms.filter((a) => a.node.id.startsWith('Lambda')).map((a) => a.metric)),
    );
    this.dashboard.addWidgets(
      graph('DynamoDB throttled requests and system errors', this.alarms.filter((a) => a.node.id.startsWith('Table')).map((a) => a.metric)),
      graph('KMS errors', [business(METRIC.kmsErrors)]),
    );
  }
}
