import { Duration, Stack } from 'aws-cdk-lib';
import { CfnPolicy, type CfnTopicRule } from 'aws-cdk-lib/aws-iot';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { iotRuleFunction } from '#infra/constructs/iot-rule-function';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import type { FunctionName } from '#functions/registry';
import { DEVICE_TOPIC_ROOT, PRESENCE_TOPIC_FILTER } from '#shared/domain/presence';

export interface DevicePresenceProps {
  functions: ServiceFunctions;
}

/** The SQL of the presence rule: every connect and disconnect lifecycle event, the message as it is. */
export const PRESENCE_RULE_SQL = `SELECT * FROM '${PRESENCE_TOPIC_FILTER}'`;

/**
 * Devices on AWS IoT Core, as far as presence needs them:
 * - the IoT policy every device certificate gets (`DevicePolicy`): a device connects only with its
 *   own thing name as client id (the certificate attached to that thing), and publishes, subscribes
 *   and receives only under its own `devices/<thing name>/` (thing policy variables), and uses its own
 *   thing's shadow only (publishes its update, get and delete requests, subscribes to and receives
 *   its answers: `$aws/things/<thing name>/shadow/…`; DeviceShadow in device-shadow.ts);
 * - the topic rule that hands each connect and disconnect lifecycle event to the function declared
 *   with `eventSource: 'iot-presence'` (record-presence: one invocation per event, asynchronous),
 *   allowed to invoke it by a resource policy naming the rule (iotRuleFunction, as the shadow's reports rule);
 * - one failures queue, the rule's error action (IoT Core could not invoke the function) and the
 *   function's on-failure destination (a storage failure on every try), whose first message raises
 *   an alarm (Monitoring's `RecordPresenceFailures`). An event in it can be sent again to the function
 *   (`aws lambda invoke`): its ordering makes a late one harmless.
 * Certificates come from IoT Core's own CA (`CreateKeysAndCertificate`), per device, by the operator.
 */
export class DevicePresence extends Construct {
  /** The name of the presence function (its declaration's). */
  readonly fn: FunctionName;
  readonly function: ServiceFunction;
  readonly failures: Queue;
  readonly rule: CfnTopicRule;
  readonly devicePolicy: CfnPolicy;

  constructor(scope: Construct, id: string, props: DevicePresenceProps) {
    super(scope, id);
    const presence = iotRuleFunction({
      functions: props.functions,
      eventSource: 'iot-presence',
      name: 'Presence',
      failuresId: 'PresenceFailures',
      failuresReason: 'It is the dead-letter queue of the presence rule and of its function\'s asynchronous runs.',
      description: 'Device presence: IoT Core lifecycle events to the presence function',
      sql: PRESENCE_RULE_SQL,
      // A storage failure is retried twice by Lambda; an event older than an hour is superseded by later ones anyway.
      retryAttempts: 2,
      maxEventAge: Duration.hours(1),
    });
    this.fn = presence.name;
    this.function = presence.function;
    this.failures = presence.failures;
    this.rule = presence.rule;

    const { account, partition, region } = Stack.of(this.function);
    const iot = `arn:${partition}:iot:${region}:${account}`;
    const own = `${DEVICE_TOPIC_ROOT}/\${iot:Connection.Thing.ThingName}/*`;
    const attached = { Bool: { 'iot:Connection.Thing.IsAttached': 'true' } };
    // Its own thing's classic shadow: the requests it may make (update, get, delete), and every answer of it.
    const shadow = '$aws/things/${iot:Connection.Thing.ThingName}/shadow';
    this.devicePolicy = new CfnPolicy(scope, 'DevicePolicy', {
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: 'iot:Connect', Resource: `${iot}:client/\${iot:Connection.Thing.ThingName}`, Condition: attached },
          { Effect: 'Allow', Action: ['iot:Publish', 'iot:Receive'], Resource: `${iot}:topic/${own}`, Condition: attached },
          { Effect: 'Allow', Action: 'iot:Subscribe', Resource: `${iot}:topicfilter/${own}`, Condition: attached },
          { Effect: 'Allow', Action: 'iot:Publish', Resource: ['update', 'get', 'delete'].map((op) => `${iot}:topic/${shadow}/${op}`), Condition: attached },
          { Effect: 'Allow', Action: 'iot:Receive', Resource: `${iot}:topic/${shadow}/*`, Condition: attached },
          { Effect: 'Allow', Action: 'iot:Subscribe', Resource: `${iot}:topicfilter/${shadow}/*`, Condition: attached },
        ],
      },
    });
  }
}

/** What the presence rule's failures queue is for, in one line (Monitoring's alarm description). */
export const PRESENCE_FAILURES_DESCRIPTION = 'A device lifecycle event could not be recorded (IoT Core could not invoke the presence function, '
  + 'or it failed every try): the event is in the presence failures queue; the function\'s logs say why.';

