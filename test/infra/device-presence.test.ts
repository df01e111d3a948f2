import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRESENCE_RULE_SQL } from '#infra/constructs/device-presence';
import { removeTestApps } from '../support/cdk-app';
import { nagCheckedStack, type Resource } from '../support/nag-checked';
import { readDeployedForm, synthesizeTemplate } from '../support/deployed-form';

// Devices on AWS IoT Core as deployed, read from the template: the device policy, the presence topic
// rule with its error action, the function it invokes and who may invoke it. The function's own role
// is proven by the IAM test (test/infra/iam-grants.test.ts) against the calls it makes.


afterAll(removeTestApps);

describe('device presence: IoT policy, topic rule, function', () => {
  let resources: Record<string, Resource>;
  let nagError: unknown;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  beforeAll(() => {
    ({ resources, nagError } = nagCheckedStack('Present'));
  });

  it('passes cdk-nag', () => {
    expect(nagError).toBeUndefined();
  });

  it('the rule hands every connect and disconnect lifecycle event, as it is, to the presence function, and its failures to a queue', () => {
    const [[, rule]] = ofType('AWS::IoT::TopicRule').filter(([, r]) => r.Properties.TopicRulePayload.Sql === PRESENCE_RULE_SQL) as [[string, Resource]];
    const payload = rule.Properties.TopicRulePayload;
    expect(payload.Sql).toBe(PRESENCE_RULE_SQL);
    expect(PRESENCE_RULE_SQL).toBe("SELECT * FROM '$aws/events/presence/+/+'");
    expect(payload.RuleDisabled).toBe(false);
    expect(payload.Actions).toHaveLength(1);
    const fnId = payload.Actions[0].Lambda.FunctionArn['Fn::GetAtt'][0] as string;
    expect(fnId).toMatch(/RecordPresence/);
    expect(resources[fnId]!.Type).toBe('AWS::Lambda::Function');

    const queueId = payload.ErrorAction.Sqs.QueueUrl.Ref as string;
    expect(resources[queueId]!.Type).toBe('AWS::SQS::Queue');
    // The same queue takes the function's runs that failed every try.
    const [[, invokeConfig]] = ofType('AWS::Lambda::EventInvokeConfig').filter(([, c]) => c.Properties.FunctionName.Ref === fnId) as [[string, Resource]];
    expect(invokeConfig.Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toBe(queueId);
    // The error action's role may send to that queue, and only that.
    const roleId = payload.ErrorAction.Sqs.RoleArn['Fn::GetAtt'][0] as string;
    expect(resources[roleId]!.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'iot.amazonaws.com' });
    const statements = ofType('AWS::IAM::Policy').filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: any }[]);
    expect(statements.flatMap((s) => [s.Action].flat()).sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    expect(statements.every((s) => s.Resource['Fn::GetAtt']?.[0] === queueId)).toBe(true);
  });

  it('only IoT Core, through this rule of this account, may invoke the function', () => {
    const [[, rule]] = ofType('AWS::IoT::TopicRule').filter(([, r]) => r.Properties.TopicRulePayload.Sql === PRESENCE_RULE_SQL) as [[string, Resource]];
    const fnId = rule.Properties.TopicRulePayload.Actions[0].Lambda.FunctionArn['Fn::GetAtt'][0] as string;
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.FunctionName['Fn::GetAtt']?.[0] === fnId);
    expect(permissions).toHaveLength(1);
    const [[, permission]] = permissions as [[string, Resource]];
    expect(permission.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'iot.amazonaws.com', SourceAccount: { Ref: 'AWS::AccountId' } });
    expect(permission.Properties.SourceArn['Fn::GetAtt'][1]).toBe('Arn');
    expect(resources[permission.Properties.SourceArn['Fn::GetAtt'][0]]!.Type).toBe('AWS::IoT::TopicRule');
  });

  it('a device connects only as its own thing, and uses only its own topics', () => {
    const [[, policy]] = ofType('AWS::IoT::Policy') as [[string, Resource]];
    const statements = policy.Properties.PolicyDocument.Statement as { Effect: string; Action: string | string[]; Resource: any; Condition: unknown }[];
    const tail = (resource: any) => String(resource['Fn::Join'][1].at(-1));
    const arnTail = (resource: any) => (Array.isArray(resource) ? resource.map(tail) : tail(resource));
    const attached = { Bool: { 'iot:Connection.Thing.IsAttached': 'true' } };
    expect(statements.map((s) => ({ effect: s.Effect, actions: [s.Action].flat(), resource: arnTail(s.Resource), condition: s.Condition }))).toEqual([
      { effect: 'Allow', actions: ['iot:Connect'], resource: ':client/${iot:Connection.Thing.ThingName}', condition: attached },
      { effect: 'Allow', actions: ['iot:Publish', 'iot:Receive'], resource: ':topic/devices/${iot:Connection.Thing.ThingName}/*', condition: attached },
      { effect: 'Allow', actions: ['iot:Subscribe'], resource: ':topicfilter/devices/${iot:Connection.Thing.ThingName}/*', condition: attached },
      // Its own thing's shadow: the three requests, and every answer (accepted, rejected, delta, documents).
      {
        effect: 'Allow', actions: ['iot:Publish'], condition: attached,
        resource: ['update', 'get', 'delete'].map((op) => `:topic/$aws/things/\${iot:Connection.Thing.ThingName}/shadow/${op}`),
      },
      { effect: 'Allow', actions: ['iot:Receive'], resource: ':topic/$aws/things/${iot:Connection.Thing.ThingName}/shadow/*', condition: attached },
      { effect: 'Allow', actions: ['iot:Subscribe'], resource: ':topicfilter/$aws/things/${iot:Connection.Thing.ThingName}/shadow/*', condition: attached },
    ]);
  });

  it('the presence function\'s role reads the device index and updates items, nothing else (its calls are proven by the IAM test)', () => {
    const form = readDeployedForm(synthesizeTemplate());
    const fn = form.functionOfRoute.get('iot presence');
    expect(fn?.id).toMatch(/RecordPresence/);
    const statements = fn!.policies.flatMap(({ document }) => document.Statement);
    // Lambda's own use of the role: a run that failed every try goes to the failures queue.
    const [failures] = form.asyncFailureQueues.filter((arn) => statements.some((s) => [s.Resource].flat().includes(arn)));
    expect(failures).toBeDefined();
    const own = statements.filter((s) => ![s.Resource].flat().every((r) => r === failures));
    const actions = own.flatMap((s) => [s.Action].flat()).filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
    expect(new Set(actions)).toEqual(new Set(['dynamodb:Query', 'dynamodb:UpdateItem']));
  });
});
