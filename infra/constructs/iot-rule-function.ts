import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnTopicRule } from 'aws-cdk-lib/aws-iot';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { FUNCTIONS, type FunctionName } from '#functions/registry';
import type { EventSourceKind } from '#shared/declaration';

/**
 * The function declared with `eventSource` in the registry, made an event-source function of
 * `functions` (in its area, with its grants). Throws when no function declares that source.
 */
export function iotEventSourceFunction(functions: ServiceFunctions, eventSource: EventSourceKind): { name: FunctionName; function: ServiceFunction } {
  const name = Object.entries(FUNCTIONS).find(([, def]) => def.eventSource === eventSource)?.[0];
  if (!name) throw new Error(`no function is declared with eventSource ${eventSource}`);
  return { name, function: functions.eventSourceFunction(name) };
}

/**
 * Lets AWS IoT Core invoke `fn` on behalf of `sourceArn` (a topic rule, a provisioning template), and
 * of this stack's account only (a resource policy with `SourceArn` and `SourceAccount`); `id` names
 * the permission (its logical id).
 */
export function allowIotInvoke(fn: ServiceFunction, id: string, sourceArn: string): void {
  fn.addPermission(id, { principal: new ServicePrincipal('iot.amazonaws.com'), sourceArn, sourceAccount: Stack.of(fn).account });
}

export interface IotRuleFunctionProps {
  functions: ServiceFunctions;
  /** The source its function is declared with: exactly one function declares it. */
  eventSource: EventSourceKind;
  /**
   * The rule's name in its construct ids, which its resources' logical ids derive from (keep them:
   * CloudFormation replaces a resource whose logical id changes): `<name>Rule`, `<name>RuleErrorRole`,
   * the permission `InvokedBy<name>Rule`; in lower case in the error role's description.
   */
  name: string;
  /** The failures queue's construct id (its logical id's source, as `name`'s). */
  failuresId: string;
  /** Why the failures queue has no dead-letter queue of its own (cdk-nag AwsSolutions-SQS3). */
  failuresReason: string;
  /** The topic rule's description. */
  description: string;
  /** The topic rule's SQL (version 2016-03-23). */
  sql: string;
  /** Lambda's retries of a failed asynchronous invocation, before the failures queue. */
  retryAttempts: number;
  /** The age past which Lambda gives an event up to the failures queue instead of trying it again. */
  maxEventAge: Duration;
}

/** What iotRuleFunction made. */
export interface IotRuleFunction {
  /** The function's name (its declaration's). */
  name: FunctionName;
  function: ServiceFunction;
  /** The rule's error action and the function's on-failure destination. */
  failures: Queue;
  rule: CfnTopicRule;
}

/**
 * An AWS IoT Core topic rule that hands each message its SQL selects to the function declared with
 * `eventSource`, one asynchronous invocation each, and that function's failures queue; all of them
 * beside the function (in its area's scope, so with the logical ids the ids in `props` give):
 * - the failures queue (`failuresId`): SQS-managed encryption, TLS only, 14 days of retention; both
 *   the function's on-failure destination (after `retryAttempts` or `maxEventAge`) and the rule's
 *   error action (IoT Core could not invoke the function), sent to by a role only IoT Core assumes;
 * - the rule (enabled), whose one action invokes the function, which only this rule of this account
 *   may invoke (allowIotInvoke).
 */
export function iotRuleFunction(props: IotRuleFunctionProps): IotRuleFunction {
  const { name, function: fn } = iotEventSourceFunction(props.functions, props.eventSource);
  const home = fn.node.scope!;
  const failures = new Queue(home, props.failuresId, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
  Validations.of(failures).acknowledge({ id: 'AwsSolutions-SQS3', reason: props.failuresReason });
  fn.configureAsyncInvoke({ retryAttempts: props.retryAttempts, maxEventAge: props.maxEventAge, onFailure: new SqsDestination(failures) });

  const errorRole = new Role(home, `${props.name}RuleErrorRole`, {
    assumedBy: new ServicePrincipal('iot.amazonaws.com'),
    description: `The ${props.name.toLowerCase()} rule's error action: sends to its failures queue`,
  });
  failures.grantSendMessages(errorRole);
  const rule = new CfnTopicRule(home, `${props.name}Rule`, {
    topicRulePayload: {
      description: props.description,
      sql: props.sql,
      awsIotSqlVersion: '2016-03-23',
      ruleDisabled: false,
      actions: [{ lambda: { functionArn: fn.functionArn } }],
      errorAction: { sqs: { queueUrl: failures.queueUrl, roleArn: errorRole.roleArn, useBase64: false } },
    },
  });
  allowIotInvoke(fn, `InvokedBy${props.name}Rule`, rule.attrArn);
  return { name, function: fn, failures, rule };
}
