import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_OPERATIONS } from '#infra/constructs/monitoring';
import { DeviceUserServiceStack, StackConfigurationError } from '#infra/stack';
import { MAIL_ENV, METRICS_ENV } from '#shared/config';
import { METRIC } from '#shared/metrics';
import { removeTestApps, testApp } from '../support/cdk-app';
import { nagCheckedStack } from '../support/nag-checked';

// The monitoring, read from the template: every alarm (its metric, threshold, evaluation
// periods and SNS actions), the dashboard, the SES configuration set the mail functions send with,
// and the two optional context values (an alarm e-mail subscriber, active tracing).

const MAIL_FROM = 'no-reply@mail.stack-test.invalid';

/** Synthesizes the stack with cdk-nag; returns its resources and nag's verdict. */
function synthesize(context: Record<string, unknown> = {}) {
  const { resources, nagError } = nagCheckedStack('Monitored', context);
  // The signing-key lifecycle's topic and subscription carry CloudFormation's requests, not alarms (stack.test.ts checks them).
  const ofType = (type: string) => Object.entries(resources).filter(([id, r]) => r.Type === type && !id.startsWith('SigningKeyLifecycle'));
  return { resources, ofType, nagError };
}

afterAll(removeTestApps);

describe('monitoring: alarms, SNS topic and dashboard', () => {
  let s: ReturnType<typeof synthesize>;
  beforeAll(() => {
    s = synthesize();
  });
  const alarms = () => s.ofType('AWS::CloudWatch::Alarm');
  const alarm = (idPart: string) => {
    const found = alarms().filter(([id]) => id.includes(idPart));
    expect(found, idPart).toHaveLength(1);
    return found[0]![1].Properties;
  };
  const topicRef = () => ({ Ref: s.ofType('AWS::SNS::Topic')[0]![0] });
  /** The metrics an alarm reads (its own, or those of its math expression). */
  const metricsOf = (props: Record<string, any>) => (props.Metrics
    ? (props.Metrics as any[]).filter((m) => m.MetricStat).map((m) => ({ ...m.MetricStat.Metric, Period: m.MetricStat.Period, Stat: m.MetricStat.Stat }))
    : [{ Namespace: props.Namespace, MetricName: props.MetricName, Dimensions: props.Dimensions, Period: props.Period, Stat: props.Statistic }]);
  const expressionOf = (props: Record<string, any>) => (props.Metrics as any[]).find((m) => m.ReturnData).Expression as string;

  it('sends every alarm, and its return to OK, to the one SNS topic, which refuses unencrypted publishing', () => {
    expect(s.ofType('AWS::SNS::Topic')).toHaveLength(1);
    expect(alarms().length).toBeGreaterThanOrEqual(2 + 2 + 2 + 1 + 1);
    for (const [id, { Properties }] of alarms()) {
      expect(Properties.AlarmActions, id).toEqual([topicRef()]);
      expect(Properties.OKActions, id).toEqual([topicRef()]);
      expect(Properties.ComparisonOperator, id).toBe('GreaterThanOrEqualToThreshold');
      expect(Properties.TreatMissingData, id).toBe('notBreaching');
    }
    const policy = s.ofType('AWS::SNS::TopicPolicy')[0]![1].Properties.PolicyDocument.Statement[0];
    expect(policy).toMatchObject({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
  });

  it.each([['Auth', 'ApisAuthApi'], ['Resource', 'ApisResourceApi']])('alarms on the %s API 5xx rate: 1 %% in two of three 5-minute periods', (api, apiId) => {
    const props = alarm(`${api}Api5xxRate`);
    expect(expressionOf(props)).toBe('IF(requests >= 20, 100 * errors / requests, 0)');
    const metrics = metricsOf(props);
    expect(metrics.map((m) => m.MetricName).sort()).toEqual(['5xx', 'Count']);
    for (const m of metrics) {
      expect(m).toMatchObject({ Namespace: 'AWS/ApiGateway', Period: 300, Stat: 'Sum' });
      expect(m.Dimensions).toEqual([{ Name: 'ApiId', Value: { Ref: expect.stringMatching(new RegExp(`^${apiId}`)) } }]);
    }
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
  });

  it.each([['Errors', 5], ['Throttles', 1]])('alarms on Lambda %s of every function, at most 10 metrics an alarm (threshold %i per 5 minutes)', (metricName, threshold) => {
    const functionIds = s.ofType('AWS::Lambda::Function').map(([id]) => id).sort();
    const group = alarms().filter(([id]) => id.includes(`Lambda${metricName}`)).map(([, a]) => a.Properties);
    expect(group.length).toBe(Math.ceil(functionIds.length / 10));
    const watched: string[] = [];
    for (const props of group) {
      const metrics = metricsOf(props);
      expect(metrics.length).toBeLessThanOrEqual(10);
      expect(expressionOf(props)).toMatch(/^SUM\(\[FILL\(\w+, 0\)(, FILL\(\w+, 0\))*\]\)$/);
      for (const m of metrics) {
        expect(m).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: metricName, Period: 300, Stat: 'Sum' });
        watched.push(m.Dimensions[0].Value.Ref);
      }
      expect(props).toMatchObject({ Threshold: threshold, EvaluationPeriods: 1 });
    }
    expect(watched.sort()).toEqual(functionIds);
  });

  it.each([['TableThrottles', 'ThrottledRequests'], ['TableSystemErrors', 'SystemErrors']])('alarms on DynamoDB %s: %s of every operation the service sends, 5 in 5 minutes', (idPart, metricName) => {
    const props = alarm(idPart);
    const table = s.ofType('AWS::DynamoDB::GlobalTable')[0]![0];
    const metrics = metricsOf(props);
    expect(metrics.map((m) => m.Dimensions.find((d: any) => d.Name === 'Operation').Value).sort()).toEqual([...TABLE_OPERATIONS].sort());
    for (const m of metrics) {
      expect(m).toMatchObject({ Namespace: 'AWS/DynamoDB', MetricName: metricName, Period: 300, Stat: 'Sum' });
      expect(m.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: table } });
    }
    expect(expressionOf(props)).toMatch(/^SUM\(\[FILL\(/);
    expect(props).toMatchObject({ Threshold: 5, EvaluationPeriods: 1 });
  });

  it('watches every DynamoDB operation the code sends', () => {
    const operationOf: Record<string, string> = {
      Get: 'GetItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', Query: 'Query', Scan: 'Scan',
      BatchGet: 'BatchGetItem', BatchWrite: 'BatchWriteItem', TransactWrite: 'TransactWriteItems', TransactGet: 'TransactGetItems',
    };
    const sent = new Set<string>();
    for (const dir of ['shared', 'functions']) {
      for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.ts'))) {
        for (const [, command] of readFileSync(join(dir, name), 'utf8').matchAll(/new (\w+?)(?:Item)?Command\(/g)) {
          if (command! in operationOf) sent.add(operationOf[command!]!);
        }
      }
    }
    expect(sent.size).toBeGreaterThan(3);
    expect([...sent].filter((op) => !(TABLE_OPERATIONS as readonly string[]).includes(op))).toEqual([]);
  });

  it('alarms on KMS errors from the signer\'s own metric, in the namespace the functions write to', () => {
    const props = alarm('KmsErrors');
    expect(metricsOf(props)).toEqual([{
      Namespace: 'DeviceUserService/Monitored', MetricName: METRIC.kmsErrors, Dimensions: [{ Name: 'service', Value: 'device-user-service' }], Period: 300, Stat: 'Sum',
    }]);
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
    for (const [id, fn] of s.ofType('AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables[METRICS_ENV.namespace], id).toBe('DeviceUserService/Monitored');
    }
  });

  it('alarms when a scheduled run of the signing-key rotation failed every try (its failures queue holds a message)', () => {
    const props = alarm('RotateSigningKeyFailures');
    const [queueId] = s.ofType('AWS::SQS::Queue').find(([id]) => id.startsWith('RotateSigningKeyFailures'))!;
    expect(metricsOf(props)).toEqual([{
      Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Period: 300, Stat: 'Maximum',
    }]);
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 1 });
  });

  it('alarms on the e-mail bounce rate: 5 % of at least 20 messages of the configuration set in 6 hours', () => {
    const props = alarm('EmailBounceRate');
    const configurationSet = s.ofType('AWS::SES::ConfigurationSet')[0]![0];
    expect(expressionOf(props)).toBe('IF(sent >= 20, 100 * bounces / sent, 0)');
    const metrics = metricsOf(props);
    expect(metrics.map((m) => m.MetricName).sort()).toEqual(['Bounce', 'Send']);
    for (const m of metrics) {
      expect(m).toMatchObject({ Namespace: 'AWS/SES', Period: 21600, Stat: 'Sum', Dimensions: [{ Name: 'ses:configuration-set', Value: { Ref: configurationSet } }] });
    }
    expect(props).toMatchObject({ Threshold: 5, EvaluationPeriods: 1 });
  });

  it('has one dashboard showing every alarm, the business metrics, the APIs and the e-mail events', () => {
    const dashboards = s.ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    // The body as CloudFormation joins it, each reference written as its JSON.
    const parts = dashboards[0]![1].Properties.DashboardBody['Fn::Join'][1] as unknown[];
    const body = parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
    for (const [id] of alarms()) expect(body, id).toContain(`{"Fn::GetAtt":["${id}","Arn"]}`);
    for (const name of Object.values(METRIC)) expect(body, name).toContain(`"DeviceUserService/Monitored","${name}","service","device-user-service"`);
    for (const event of ['Send', 'Delivery', 'Bounce', 'Complaint']) expect(body, event).toContain(`"AWS/SES","${event}","ses:configuration-set"`);
    for (const metric of ['Count', '5xx']) expect(body, metric).toContain(`"AWS/ApiGateway","${metric}","ApiId"`);
  });

  it('has no subscriber and no tracing unless asked, and passes cdk-nag', () => {
    expect(s.ofType('AWS::SNS::Subscription')).toHaveLength(0);
    for (const [id, fn] of s.ofType('AWS::Lambda::Function')) expect(fn.Properties.TracingConfig, id).toBeUndefined();
    expect(s.nagError).toBeUndefined();
  });
});

describe('e-mail: the SES configuration set', () => {
  let s: ReturnType<typeof synthesize>;
  beforeAll(() => {
    s = synthesize();
  });

  it('suppresses addresses that bounced or complained, and publishes send, delivery, bounce and complaint events to CloudWatch', () => {
    const [id, set] = s.ofType('AWS::SES::ConfigurationSet')[0]!;
    expect(set.Properties.SuppressionOptions).toEqual({ SuppressedReasons: ['BOUNCE', 'COMPLAINT'] });
    const destinations = s.ofType('AWS::SES::ConfigurationSetEventDestination').map(([, d]) => d.Properties);
    expect(destinations).toHaveLength(1);
    expect(destinations[0]!.ConfigurationSetName).toEqual({ Ref: id });
    const destination = destinations[0]!.EventDestination;
    expect(destination.Enabled).toBe(true);
    expect(destination.MatchingEventTypes).toEqual(expect.arrayContaining(['send', 'delivery', 'bounce', 'complaint']));
    expect(destination.CloudWatchDestination.DimensionConfigurations).toEqual([
      { DimensionName: 'ses:configuration-set', DimensionValueSource: 'messageTag', DefaultDimensionValue: { Ref: id } },
    ]);
  });

  it('is named by every mail function, whose ses:SendEmail covers the set as well as the sender', () => {
    const [id] = s.ofType('AWS::SES::ConfigurationSet')[0]!;
    const senders = s.ofType('AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[])
      .filter((st) => [st.Action].flat().includes('ses:SendEmail'));
    // The four account-mail functions (sign-up, resend, reset, account deletion), the three sign-ins (a new browser's alert), and the webhook delivery (the notice of a disabled webhook).
    expect(senders).toHaveLength(8);
    for (const statement of senders) {
      expect(statement.Resource).toContainEqual({ 'Fn::Join': ['', expect.arrayContaining([':configuration-set/', { Ref: id }])] });
    }
    const mailFunctions = s.ofType('AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Environment.Variables[MAIL_ENV.sender]);
    for (const [fnId, fn] of mailFunctions) expect(fn.Properties.Environment.Variables[MAIL_ENV.configurationSet], fnId).toEqual({ Ref: id });
  });
});

describe('monitoring options (context values)', () => {
  it('subscribes the alarmEmail address to the alarm topic', () => {
    const s = synthesize({ alarmEmail: 'oncall@example.org' });
    const subscriptions = s.ofType('AWS::SNS::Subscription').map(([, r]) => r.Properties);
    expect(subscriptions).toEqual([{ Protocol: 'email', Endpoint: 'oncall@example.org', TopicArn: { Ref: s.ofType('AWS::SNS::Topic')[0]![0] } }]);
    expect(s.nagError).toBeUndefined();
  });

  it.each(['oncall', 'On Call <oncall@example.org>', 'oncall@localhost', 42])('stops synth on a malformed alarmEmail %j, naming it', (alarmEmail) => {
    const build = () => new DeviceUserServiceStack(testApp({ mailFrom: MAIL_FROM, alarmEmail }), 'BadAlarmEmail');
    expect(build).toThrow(StackConfigurationError);
    expect(build).toThrow(`'alarmEmail' must be a plain e-mail address`);
    expect(build).toThrow(JSON.stringify(alarmEmail));
  });

  it.each([true, 'true'])('turns on active tracing of every function with tracing=%j, and stays cdk-nag clean', (tracing) => {
    const s = synthesize({ tracing });
    const functions = s.ofType('AWS::Lambda::Function');
    for (const [id, fn] of functions) expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
    const xray = s.ofType('AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('xray:PutTraceSegments'));
    expect(xray).toHaveLength(functions.length);
    expect(s.nagError).toBeUndefined();
  });

  it.each([false, 'false'])('leaves tracing off with tracing=%j', (tracing) => {
    const s = synthesize({ tracing });
    for (const [id, fn] of s.ofType('AWS::Lambda::Function')) expect(fn.Properties.TracingConfig, id).toBeUndefined();
  });

  it.each(['yes', 'on', 1])('stops synth on a malformed tracing value %j, naming it', (tracing) => {
    const build = () => new DeviceUserServiceStack(testApp({ mailFrom: MAIL_FROM, tracing }), 'BadTracing');
    expect(build).toThrow(StackConfigurationError);
    expect(build).toThrow(`'tracing' must be true or false; got ${JSON.stringify(tracing)}`);
  });
});
