import { Duration, Stack } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnTopicRule } from 'aws-cdk-lib/aws-iot';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { iotRuleFunction } from '#infra/constructs/iot-rule-function';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import type { FunctionName } from '#functions/registry';
import { DESIRED_STATE_FILTER_PATTERNS, DESIRED_STATE_MAX_RECORD_AGE_SECONDS, DESIRED_STATE_RETRY_ATTEMPTS } from '#shared/shadow/desired-filter';

export interface DeviceShadowProps {
  table: ITableV2;
  functions: ServiceFunctions;
}

/** The SQL of the reports rule: every accepted update's documents, with the thing's name (the device id). */
export const REPORTS_RULE_SQL = "SELECT *, topic(3) AS thingName FROM '$aws/things/+/shadow/update/documents'";

/** The function declared with `eventSource: 'table-stream'` under functions/devices/: the desired state's. */
const DESIRED_STATE_FN: FunctionName = 'sync-desired-state';

/**
 * Devices that obey, through AWS IoT Core's device shadow (beside DevicePresence, in the devices'
 * nested stack):
 * - the desired state: the table's stream, filtered to device changes, invokes `sync-desired-state`,
 *   which writes an owner's command of `active` or `sound` to the device's shadow (granted
 *   iot:GetThingShadow and iot:UpdateThingShadow on the account's things only); a batch that fails
 *   is split and retried, then its range goes to the failures queue;
 * - the reports: a topic rule hands each shadow's documents to the function declared with
 *   `eventSource: 'iot-shadow'` (one asynchronous invocation each; Lambda retries twice), whose
 *   failures, like the rule's own, go to the same queue;
 * - one failures queue, whose first message raises an alarm (Monitoring's `DeviceShadowFailures`).
 * The device policy (DevicePresence) lets each device use its own thing's shadow topics only.
 */
export class DeviceShadow extends Construct {
  readonly desiredState: ServiceFunction;
  readonly reports: ServiceFunction;
  /** The name of the reports function (its declaration's). */
  readonly reportsFn: FunctionName;
  readonly failures: Queue;
  readonly rule: CfnTopicRule;

  constructor(scope: Construct, id: string, props: DeviceShadowProps) {
    super(scope, id);
    // The desired state's function first: the order the functions are made in is their order in the template.
    this.desiredState = props.functions.eventSourceFunction(DESIRED_STATE_FN);
    const reports = iotRuleFunction({
      functions: props.functions,
      eventSource: 'iot-shadow',
      name: 'Reports',
      failuresId: 'ShadowFailures',
      failuresReason: 'It is the dead-letter queue of the desired state\'s stream mapping, the reports rule and its function.',
      description: 'Device reports: each shadow update\'s documents to the reports function',
      sql: REPORTS_RULE_SQL,
      // A storage failure is retried twice by Lambda; a later report supersedes an older one anyway.
      retryAttempts: 2,
      maxEventAge: Duration.hours(1),
    });
    this.reportsFn = reports.name;
    this.reports = reports.function;
    this.failures = reports.failures;
    this.rule = reports.rule;

    this.desiredState.addEventSource(new DynamoEventSource(props.table, {
      startingPosition: StartingPosition.LATEST,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(0),
      bisectBatchOnError: true,
      retryAttempts: DESIRED_STATE_RETRY_ATTEMPTS,
      maxRecordAge: Duration.seconds(DESIRED_STATE_MAX_RECORD_AGE_SECONDS),
      onFailure: new SqsDlq(this.failures),
      filters: DESIRED_STATE_FILTER_PATTERNS.map((pattern) => FilterCriteria.filter(pattern)),
    }));
  }
}

/**
 * The statement of a function's role for the shadows it uses (its declaration's `deviceShadow`): the
 * actions named, on the account's things of the region only.
 */
export function shadowStatement(scope: Construct, uses: readonly ('read' | 'write')[]): PolicyStatement {
  const { account, partition, region } = Stack.of(scope);
  return new PolicyStatement({
    actions: uses.map((use) => (use === 'read' ? 'iot:GetThingShadow' : 'iot:UpdateThingShadow')),
    resources: [`arn:${partition}:iot:${region}:${account}:thing/*`],
  });
}

/** What the device shadow's failures queue is for, in one line (Monitoring's alarm description). */
export const SHADOW_FAILURES_DESCRIPTION = 'An owner\'s command could not be written to a device\'s shadow, or a device\'s report could not be recorded, '
  + 'after every try: the stream range or the event is in the device shadow failures queue; the functions\' logs say why.';
