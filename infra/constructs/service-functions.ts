import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { areaOf, type FunctionAreas } from '#infra/constructs/function-areas';
import { pascal } from '#infra/constructs/construct-ids';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { AccountMail } from '#infra/constructs/account-mail';
import type { SigningKey } from '#infra/constructs/signing-key';
import { needsOf, tableGrantOf } from '#infra/function-grants';
import { shadowStatement } from '#infra/constructs/device-shadow';
import { acknowledgeWildcards } from '#infra/constructs/nag-wildcards';
import { ENV, MAIL_ENV, METRICS_ENV, WEBHOOK_ENV } from '#shared/config';
import { endpointOf, type FunctionName } from '#functions/registry';
import type { ApiName } from '#shared/routes';

export interface ServiceFunctionsProps {
  /** The nested stacks the functions are created in, by area (function-areas.ts). */
  areas: FunctionAreas;
  table: ITableV2;
  signingKey: SigningKey;
  /** Verified SES sender of account e-mail (confirmation, password reset). */
  mailFrom: string;
  /** The SES configuration set account e-mail is sent with. */
  mail: AccountMail;
  /** CloudWatch namespace of the business metrics (shared/metrics.ts). */
  metricsNamespace: string;
  /** AWS X-Ray active tracing on every function. */
  tracing?: boolean;
  /** The auth API's URL: the access tokens' issuer. */
  issuer: string;
  /** The resource API's URL: the access tokens' audience. */
  audience: string;
}

/**
 * The service's Lambda functions: one per declared function (functions/registry.ts) and API that serves it,
 * each with the environment of `shared/config.ts` and a role granted exactly what its handler uses
 * (its declaration's needs, infra/function-grants.ts): its table actions, the signing key, and `ses:SendEmail` as the sender with the
 * configuration set.
 */
export class ServiceFunctions extends Construct {
  private readonly functions = new Map<string, ServiceFunction>();
  private readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, private readonly props: ServiceFunctionsProps) {
    super(scope, id);
    this.node.addValidation({ validate: () => this.waitingForQueue.map(({ fn }) => `${fn} uses the webhook queue, which was never bound (bindWebhookQueue)`) });
    this.environment = {
      [ENV.tableName]: props.table.tableName,
      [ENV.issuer]: props.issuer,
      [ENV.audience]: props.audience,
      [ENV.signingKeyId]: props.signingKey.key.keyId,
      [MAIL_ENV.sender]: props.mailFrom,
      [MAIL_ENV.configurationSet]: props.mail.configurationSetName,
      [METRICS_ENV.namespace]: props.metricsNamespace,
    };
  }

  /** HTTP functions that put messages on the webhook queue, created before it (see bindWebhookQueue). */
  private readonly waitingForQueue: { fn: FunctionName; fnc: ServiceFunction }[] = [];

  /**
   * Gives the webhook delivery queue to the functions created before it that use it: its URL in
   * WEBHOOK_QUEUE_URL and exactly their queue actions. A synth fails while any is left unbound.
   */
  bindWebhookQueue(queue: IQueue): void {
    for (const { fn, fnc } of this.waitingForQueue.splice(0)) {
      fnc.addEnvironment(WEBHOOK_ENV.queueUrl, queue.queueUrl);
      this.grantQueue(fn, fnc, queue);
    }
  }

  private grantQueue(fn: FunctionName, fnc: ServiceFunction, queue: IQueue): void {
    // Exactly these actions (grantSendMessages would add GetQueueAttributes and GetQueueUrl, which the code never calls).
    const actions = (needsOf(fn).webhookQueue ?? []).map((use) => (use === 'send' ? 'sqs:SendMessage' : 'sqs:ChangeMessageVisibility'));
    fnc.addToRolePolicy(new PolicyStatement({ actions, resources: [queue.queueArn] }));
  }

  /** The function `fn` of `api`, created with its grants on first use. */
  functionFor(api: ApiName, fn: FunctionName): ServiceFunction {
    const id = `${pascal(api)}${pascal(fn)}Function`;
    let fnc = this.functions.get(id);
    if (fnc) return fnc;
    fnc = this.create(id, fn, this.environment, { api });
    this.functions.set(id, fnc);
    return fnc;
  }

  /**
   * A function without a route (`schedule` in its declaration), created with its grants and the
   * EventBridge rule that invokes it, `{"mode":"when-due"}`, on that schedule. A run that fails is
   * not lost silently: EventBridge retries delivering the event, Lambda retries a failed
   * asynchronous run twice, and what fails every try lands in the function's `failures` queue
   * (the rule's dead-letter queue and the function's on-failure destination), which Monitoring
   * alarms on.
   */
  scheduledFunction(fn: FunctionName): { function: ServiceFunction; failures: Queue } {
    const { schedule } = endpointOf(fn);
    if (!schedule) throw new Error(`${fn} has no schedule in its declaration`);
    const { signingKey } = this.props;
    const id = `${pascal(fn)}Function`;
    const fnc = this.create(id, fn, {
      ...this.environment,
      [ENV.signingKeyTag]: signingKey.tagValue,
      [ENV.signingKeyAliasPrefix]: signingKey.aliasPrefix,
    });
    this.functions.set(id, fnc);
    const scope = fnc.node.scope!;
    const failures = new Queue(scope, `${pascal(fn)}Failures`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(failures).acknowledge({ id: 'AwsSolutions-SQS3', reason: `It is the dead-letter queue of ${fn}'s schedule and asynchronous runs.` });
    // Within the hour: the next scheduled run supersedes an older event.
    fnc.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(1), onFailure: new SqsDestination(failures) });
    new Rule(scope, `${pascal(fn)}Schedule`, {
      description: `Invokes ${fn} on its schedule`,
      schedule: Schedule.expression(schedule),
      targets: [new LambdaFunction(fnc, {
        event: RuleTargetInput.fromObject({ mode: 'when-due' }),
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
        deadLetterQueue: failures,
      })],
    });
    return { function: fnc, failures };
  }

  /**
   * A function an event source invokes (`eventSource` in its declaration), with its grants, the
   * webhook delivery queue's among them when it uses it, and `environment` added to the shared one.
   * The caller connects the source: the mapping (infra/constructs/webhooks.ts) or the topic rule
   * (infra/constructs/iot-rule-function.ts).
   */
  eventSourceFunction(fn: FunctionName, options: { environment?: Record<string, string>; queue?: IQueue; timeoutSeconds?: number } = {}): ServiceFunction {
    if (!endpointOf(fn).eventSource) throw new Error(`${fn} has no event source in its declaration`);
    const id = `${pascal(fn)}Function`;
    const fnc = this.create(id, fn, { ...this.environment, ...options.environment }, options);
    this.functions.set(id, fnc);
    return fnc;
  }

  private create(id: string, fn: FunctionName, environment: Record<string, string>, extra: { api?: ApiName; queue?: IQueue; timeoutSeconds?: number } = {}): ServiceFunction {
    const { props } = this;
    const def = endpointOf(fn);
    const needs = needsOf(fn);
    const fnc = new ServiceFunction(props.areas.of(areaOf(fn, extra.api)), id, {
      entry: def.entry, environment, assets: def.assets, lazyModules: def.lazyModules, tracing: props.tracing, timeoutSeconds: extra.timeoutSeconds,
      recentSignIn: def.recentSignIn,
    });
    if (needs.webhookQueue?.length) {
      // An HTTP function (the console's "send test event", "send again") exists before the queue: bound by bindWebhookQueue.
      if (extra.queue) this.grantQueue(fn, fnc, extra.queue);
      else this.waitingForQueue.push({ fn, fnc });
    }
    const table = tableGrantOf(fn);
    if (table.actions.length > 0 || table.index) fnc.bindTable(props.table, table.actions, table.index);
    if (needs.signingKey === 'sign') props.signingKey.grantSign(fnc);
    if (needs.signingKey === 'verify') props.signingKey.grantVerify(fnc);
    if (needs.signingKey === 'rotate') props.signingKey.grantRotate(fnc);
    if (needs.deviceShadow?.length) {
      const statement = shadowStatement(fnc, needs.deviceShadow);
      fnc.addToRolePolicy(statement);
      acknowledgeWildcards(fnc, statement.resources,
        'Any device of the account may be commanded by its owner: the things are the devices, created per device by the operator, not by the stack.');
    }
    if (needs.sendsMail) {
      // SendEmail is authorized against the verified identity SES sends as, which may be the address,
      // its domain or any parent domain of it (SES verifies a domain for all its subdomains); naming a
      // configuration set, it is checked against that set too.
      const { region, account, partition } = Stack.of(fnc);
      fnc.addToRolePolicy(new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          ...senderIdentities(props.mailFrom).map((identity) => `arn:${partition}:ses:${region}:${account}:identity/${identity}`),
          props.mail.configurationSetArn,
        ],
      }));
    }
    if (needs.deviceCertificates === 'deactivate') {
      // A removed device's certificate turned INACTIVE (UpdateCertificate is authorized on the certificate).
      const { region, account, partition } = Stack.of(fnc);
      const certificates = `arn:${partition}:iot:${region}:${account}:cert/*`;
      fnc.addToRolePolicy(new PolicyStatement({ actions: ['iot:UpdateCertificate'], resources: [certificates] }));
      acknowledgeWildcards(fnc, [certificates],
        'A device\'s certificate is known only at run time (its id is on the device\'s item): the one action, which deactivates, on the account\'s certificates.');
    }
    return fnc;
  }

  /** Every function created so far. */
  all(): ServiceFunction[] {
    return [...this.functions.values()];
  }
}

/**
 * The SES identities that may stand for `address` when it sends: the address itself, its domain and
 * every parent domain of at least two labels (`no-reply@mail.example.org` → the address,
 * `mail.example.org`, `example.org`): "a verified domain identity also verifies its subdomains"
 * (SES Developer Guide, "Creating and verifying identities").
 */
function senderIdentities(address: string): string[] {
  const labels = address.slice(address.lastIndexOf('@') + 1).split('.');
  return [address, ...labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'))];
}
