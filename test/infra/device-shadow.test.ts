import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS_RULE_SQL } from '#infra/constructs/device-shadow';
import { DESIRED_STATE_FILTER_PATTERNS, DESIRED_STATE_RETRY_ATTEMPTS } from '#shared/shadow/desired-filter';
import { removeTestApps } from '../support/cdk-app';
import { nagCheckedStack, type Resource } from '../support/nag-checked';

// The device shadow as deployed, read from the template: the desired state's stream mapping (filter,
// retries, on-failure queue), the reports rule with its error action, the failures queue's alarm, and
// the desired-state function's shadow grant. Its calls are proven by the IAM test (test/infra/iam-grants.test.ts).

afterAll(removeTestApps);

describe('device shadow: desired state, reports, failures', () => {
  let resources: Record<string, Resource>;
  let nagError: unknown;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const fnId = (pattern: RegExp) => ofType('AWS::Lambda::Function').find(([id]) => pattern.test(id))![0];
  let failuresId: string;

  beforeAll(() => {
    ({ resources, nagError } = nagCheckedStack('Shadowed'));
    failuresId = ofType('AWS::SQS::Queue').find(([id]) => /ShadowFailures/.test(id))![0];
  });

  it('passes cdk-nag', () => {
    expect(nagError).toBeUndefined();
  });

  it('the table\'s stream invokes the desired-state function for device changes only, split and retried, then its range to the failures queue', () => {
    const desired = fnId(/SyncDesiredState/);
    const [[, mapping]] = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === desired) as [[string, Resource]];
    expect(mapping.Properties.EventSourceArn['Fn::GetAtt'][1]).toBe('StreamArn');
    expect(mapping.Properties).toMatchObject({ BisectBatchOnFunctionError: true, MaximumRetryAttempts: DESIRED_STATE_RETRY_ATTEMPTS, StartingPosition: 'LATEST' });
    expect(mapping.Properties.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual(DESIRED_STATE_FILTER_PATTERNS);
    expect(mapping.Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toBe(failuresId);
  });

  it('the desired-state function may read and update the things\' shadows and deactivate certificates (a device deleted with its account), nothing else of IoT', () => {
    const role = (resources[fnId(/SyncDesiredState/)]!.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const statements = ofType('AWS::IAM::Policy').filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === role))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: any }[]);
    const iot = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('iot:')));
    expect(iot.map((s) => ({ actions: [s.Action].flat(), resource: JSON.stringify(s.Resource).match(/:(thing|cert)\/\*/)?.[0] }))).toEqual([
      { actions: ['iot:GetThingShadow', 'iot:UpdateThingShadow'], resource: ':thing/*' },
      { actions: ['iot:UpdateCertificate'], resource: ':cert/*' },
    ]);
  });

  it('the reports rule hands each shadow\'s documents, with the thing\'s name, to the reports function, and its failures to the same queue', () => {
    const [[, rule]] = ofType('AWS::IoT::TopicRule').filter(([, r]) => r.Properties.TopicRulePayload.Sql === REPORTS_RULE_SQL) as [[string, Resource]];
    expect(REPORTS_RULE_SQL).toBe("SELECT *, topic(3) AS thingName FROM '$aws/things/+/shadow/update/documents'");
    const payload = rule.Properties.TopicRulePayload;
    const reports = payload.Actions[0].Lambda.FunctionArn['Fn::GetAtt'][0] as string;
    expect(reports).toMatch(/RecordShadowReport/);
    expect(payload.ErrorAction.Sqs.QueueUrl.Ref).toBe(failuresId);
    const [[, invokeConfig]] = ofType('AWS::Lambda::EventInvokeConfig').filter(([, c]) => c.Properties.FunctionName.Ref === reports) as [[string, Resource]];
    expect(invokeConfig.Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toBe(failuresId);
  });

  it('the failures queue\'s first message raises an alarm', () => {
    const alarm = ofType('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.Namespace === 'AWS/SQS'
      && JSON.stringify(a.Properties.Dimensions).includes(failuresId));
    expect(alarm?.[1].Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 1 });
    expect(alarm?.[1].Properties.AlarmDescription).toContain('device shadow failures queue');
  });
});
