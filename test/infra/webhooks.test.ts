import { FilterCriteria, FilterRule } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_ENV } from '#shared/config';
import {
  DELIVERY_FUNCTION_TIMEOUT_SECONDS, DELIVERY_MAX_CONCURRENCY, MAX_DELIVERY_ATTEMPTS, QUEUE_VISIBILITY_TIMEOUT_SECONDS, RETRY_DELAYS_SECONDS,
} from '#shared/webhooks/deliver';
import { FAN_OUT_MAX_RECORD_AGE_SECONDS, STREAM_RETENTION_SECONDS } from '#shared/webhooks/stream-failures';
import { removeTestApps } from '../support/cdk-app';
import { nagCheckedStack, type Resource } from '../support/nag-checked';

// The webhook pipeline as deployed, read from the template: the table's stream, the delivery queue
// with its dead-letter queue and alarm, the two functions, their event source mappings and their
// least-privilege grants (the IAM proof, test/infra/iam-grants.test.ts, checks them against the calls).


afterAll(removeTestApps);

describe('webhooks: stream, queues, alarm, functions', () => {
  let resources: Record<string, Resource>;
  let nagError: unknown;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const functionWithEntry = (id: string) => {
    const found = ofType('AWS::Lambda::Function').find(([logicalId]) => logicalId.includes(id));
    if (!found) throw new Error(`no function ${id}`);
    return found;
  };
  const statementsOf = (fnId: string) => {
    const roleId = resources[fnId]!.Properties.Role['Fn::GetAtt'][0];
    return ofType('AWS::IAM::Policy').filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
  };
  const actionsOf = (fnId: string) => statementsOf(fnId).flatMap((s) => [s.Action].flat());

  beforeAll(() => {
    ({ resources, nagError } = nagCheckedStack('Webhooked'));
  });

  it('the table streams new and old images', () => {
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, Resource]];
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('the delivery queue dead-letters after the last attempt, and the dead-letter queue raises an alarm', () => {
    // The webhook pipeline's three, the stream failures' below (the rotation's failures queue is Monitoring's business: monitoring.test.ts).
    const queues = ofType('AWS::SQS::Queue').filter(([id]) => id.startsWith('Webhooks'));
    expect(queues).toHaveLength(3);
    const [deliveriesId, deliveries] = queues.find(([, q]) => q.Properties.RedrivePolicy)!;
    const [deadId, dead] = queues.find(([id]) => id !== deliveriesId && id.includes('DeadLetters'))!;
    expect(deliveries.Properties).toMatchObject({
      VisibilityTimeout: QUEUE_VISIBILITY_TIMEOUT_SECONDS, SqsManagedSseEnabled: true,
      RedrivePolicy: { maxReceiveCount: MAX_DELIVERY_ATTEMPTS, deadLetterTargetArn: { 'Fn::GetAtt': [deadId, 'Arn'] } },
    });
    // The queue keeps a message longer than the whole retry schedule.
    expect(deliveries.Properties.MessageRetentionPeriod).toBeGreaterThan(RETRY_DELAYS_SECONDS.reduce((a: number, b: number) => a + b, 0) * 1.2);
    expect(dead.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    // All three refuse plain HTTP.
    expect(ofType('AWS::SQS::QueuePolicy').filter(([id]) => id.startsWith('Webhooks'))).toHaveLength(3);

    const alarm = ofType('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.Namespace === 'AWS/SQS'
      && a.Properties.Dimensions[0].Value['Fn::GetAtt'][0] === deadId);
    expect(alarm?.[1].Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadId, 'QueueName'] } }],
    });
    // Monitoring's alarm: the one topic, when it fires and when it clears.
    expect(alarm?.[1].Properties.AlarmActions).toHaveLength(1);
    expect(alarm?.[1].Properties.OKActions).toEqual(alarm?.[1].Properties.AlarmActions);
  });

  it('the fan-out reads the stream (split on errors, bounded retries); the delivery takes batches of 10 with partial failures', () => {
    const [fanOutId] = functionWithEntry('FanOutEvents');
    const [deliverId, deliver] = functionWithEntry('DeliverWebhooks');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    expect(mappings.find((m) => m.FunctionName.Ref === fanOutId)).toMatchObject({
      StartingPosition: 'LATEST', BatchSize: 100, BisectBatchOnFunctionError: true, MaximumRetryAttempts: 10, MaximumRecordAgeInSeconds: 43_200,
      EventSourceArn: { 'Fn::GetAtt': [expect.any(String), 'StreamArn'] },
    });
    expect(mappings.find((m) => m.FunctionName.Ref === deliverId)).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    expect(deliver.Properties.Timeout).toBe(DELIVERY_FUNCTION_TIMEOUT_SECONDS);
    for (const id of [fanOutId, deliverId]) expect(resources[id]!.Properties.Environment.Variables[WEBHOOK_ENV.queueUrl]).toEqual({ Ref: expect.any(String) });
  });

  it('a stream batch the fan-out gives up on goes to an encrypted, SSL-only queue kept 14 days, whose first message raises an alarm', () => {
    const [fanOutId] = functionWithEntry('FanOutEvents');
    const mapping = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties).find((m) => m.FunctionName.Ref === fanOutId)!;
    const [failuresId, failures] = ofType('AWS::SQS::Queue').find(([id]) => id.startsWith('WebhooksStreamFailures'))!;
    expect(mapping.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [failuresId, 'Arn'] } } });
    expect(failures.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    const [, policy] = ofType('AWS::SQS::QueuePolicy').find(([, p]) => p.Properties.Queues.some((q: { Ref: string }) => q.Ref === failuresId))!;
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(expect.objectContaining({
      Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    }));
    // Lambda gives up at 12 hours at the latest: the stream (24 hours) still has the records for 12 more, to be replayed.
    expect(mapping.MaximumRecordAgeInSeconds).toBe(FAN_OUT_MAX_RECORD_AGE_SECONDS);
    expect(STREAM_RETENTION_SECONDS - FAN_OUT_MAX_RECORD_AGE_SECONDS).toBeGreaterThanOrEqual(12 * 3600);
    // Lambda sends with the function's role: sqs:SendMessage on that queue alone.
    const sends = statementsOf(fanOutId).filter((st) => JSON.stringify(st.Resource).includes(failuresId));
    expect(sends.flatMap((st) => [st.Action].flat())).toContain('sqs:SendMessage');
    expect(sends.every((st) => JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [failuresId, 'Arn'] }))).toBe(true);

    const alarm = ofType('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.Namespace === 'AWS/SQS'
      && a.Properties.Dimensions[0].Value['Fn::GetAtt'][0] === failuresId);
    expect(alarm?.[1].Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarm?.[1].Properties.AlarmDescription).toContain('npm run admin -- replay-stream-failures');
    expect(alarm?.[1].Properties.AlarmActions).toHaveLength(1);
  });

  it('the delivery mapping invokes at most DELIVERY_MAX_CONCURRENCY at once, and no function reserves concurrency', () => {
    const [deliverId] = functionWithEntry('DeliverWebhooks');
    const mapping = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties).find((m) => m.FunctionName.Ref === deliverId)!;
    expect(mapping.ScalingConfig).toEqual({ MaximumConcurrency: DELIVERY_MAX_CONCURRENCY });
    // Lambda's range for an SQS event source's maximum concurrency; within the default account concurrency (1,000) with room for the API.
    expect(DELIVERY_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2);
    expect(DELIVERY_MAX_CONCURRENCY).toBeLessThanOrEqual(1000 / 5);
    // Reserved concurrency would stop the deploy on a new account (10 concurrent executions): none anywhere.
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(2);
    expect(functions.filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined).map(([id]) => id)).toEqual([]);
  });

  it('the fan-out is invoked only for records that can make events: devices, consents removed or changed, families revoked', () => {
    const [fanOutId] = functionWithEntry('FanOutEvents');
    const mapping = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties).find((m) => m.FunctionName.Ref === fanOutId)!;
    // Written out with CDK's own filter rules: the template says what Lambda's filter syntax means by them.
    const expected = [
      { dynamodb: { Keys: { pk: { S: FilterRule.beginsWith('USER#') }, sk: { S: FilterRule.beginsWith('DEVICE#') } } } },
      // A consent removed (grant.revoked) or rewritten (grant.updated, when its scopes or devices changed).
      { eventName: FilterRule.or('REMOVE', 'MODIFY'), dynamodb: { Keys: { pk: { S: FilterRule.beginsWith('USER#') }, sk: { S: FilterRule.beginsWith('CONSENT#') } } } },
      {
        eventName: FilterRule.isEqual('MODIFY'),
        dynamodb: {
          Keys: { pk: { S: FilterRule.beginsWith('FAMILY#') } },
          OldImage: { status: { S: FilterRule.isEqual('active') } },
          NewImage: { status: { S: FilterRule.isEqual('revoked') } },
        },
      },
    ].map((filter) => FilterCriteria.filter(filter).pattern as string);
    const patterns = (mapping.FilterCriteria?.Filters ?? []).map((f: { Pattern: string }) => f.Pattern);
    expect(patterns.map((p: string) => JSON.parse(p))).toEqual(expected.map((p) => JSON.parse(p)));
    // Lambda's default quota: at most 5 filters per event source mapping.
    expect(patterns.length).toBeLessThanOrEqual(5);
  });

  it('each function may do only its part: the fan-out sends, the delivery changes visibility and mails', () => {
    const [fanOutId] = functionWithEntry('FanOutEvents');
    const [deliverId] = functionWithEntry('DeliverWebhooks');
    const fanOut = actionsOf(fanOutId);
    const deliver = actionsOf(deliverId);
    expect(fanOut).toContain('sqs:SendMessage');
    expect(fanOut).not.toContain('sqs:ChangeMessageVisibility');
    expect(fanOut).toEqual(expect.arrayContaining(['dynamodb:GetRecords', 'dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:PutItem']));
    expect(fanOut).not.toContain('dynamodb:UpdateItem');
    expect(deliver).toEqual(expect.arrayContaining(['sqs:ChangeMessageVisibility', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'ses:SendEmail', 'dynamodb:UpdateItem']));
    expect(deliver).not.toContain('sqs:SendMessage');
    expect(deliver).not.toContain('dynamodb:PutItem');
    expect([...fanOut, ...deliver].filter((a) => a.includes('*'))).toEqual([]);
  });

  it('passes cdk-nag (each stack\'s size: stack-size.test.ts)', () => {
    expect(nagError).toBeUndefined();
  });
});
