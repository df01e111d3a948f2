import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIFECYCLE_TOPIC_SUFFIX, SIGNING_KEY_LIFECYCLE_TYPE } from '#infra/constructs/signing-key-lifecycle';
import { ENV } from '#shared/config';
import { DeviceUserServiceStack } from '#infra/stack';
import { removeTestApps, testApp } from '../support/cdk-app';
import { deployedTemplate } from '../support/deployed-form';

// The template's side of the signing keys' lifecycle: the rotated keys' policy names the two roles
// by ARN and is a property of the lifecycle resource (a replaced role makes an Update), and that
// resource's ServiceToken is a topic named after the stack, which no refactoring of the functions
// changes (CloudFormation refuses to modify a ServiceToken).

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

afterAll(removeTestApps);

describe('the signing keys\' lifecycle in the template', () => {
  let template: Template;
  let resources: Resources;
  const newApp = () => testApp({ mailFrom: 'no-reply@mail.stack-test.invalid' });

  beforeAll(() => {
    template = Template.fromJSON(deployedTemplate(new DeviceUserServiceStack(newApp(), 'Test')));
    resources = template.toJSON().Resources as Resources;
  });

  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const functionOfRoute = (routeKey: string) => {
    const route = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey)!;
    const integration = resources[route[1].Properties.Target['Fn::Join'][1][1].Ref]!;
    return resources[integration.Properties.IntegrationUri['Fn::GetAtt'][0]]!;
  };
  const rotationFunction = () => {
    const found = ofType('AWS::Lambda::Function').filter(([id]) => id.includes('RotateSigningKey'));
    expect(found).toHaveLength(1);
    return found[0]![1];
  };

  it('gives the keys a rotation creates a key policy: the account through IAM, kms:Sign for the token function\'s role and the rotation\'s actions for the rotation\'s role, each by ARN, never by a tag', () => {
    const roleOf = (fn: Resources[string]) => fn.Properties.Role['Fn::GetAtt'][0];
    const policy = rotationFunction().Properties.Environment.Variables[ENV.signingKeyPolicy];
    const rendered = JSON.stringify(policy);
    expect(rendered).toContain('\\"Sid\\":\\"AccountAdministration\\"');
    expect(rendered).toContain('\\"Action\\":\\"kms:Sign\\"');
    expect(rendered).toContain(JSON.stringify({ 'Fn::GetAtt': [roleOf(functionOfRoute('POST /oauth/token')), 'Arn'] }));
    expect(rendered).toContain(JSON.stringify({ 'Fn::GetAtt': [roleOf(rotationFunction()), 'Arn'] }));
    expect(rendered).not.toContain('aws:PrincipalTag');
    expect(rendered).not.toContain('aws:ResourceTag');
  });

  it('runs the rotation function at deployment and at deletion (the lifecycle resource, through its topic), with the rotated keys\' policy as a property, and keeps its environment within Lambda\'s 4 KB', () => {
    const lifecycle = ofType(SIGNING_KEY_LIFECYCLE_TYPE);
    expect(lifecycle).toHaveLength(1);
    const rotationId = ofType('AWS::Lambda::Function').find(([id]) => id.includes('RotateSigningKey'))![0];
    const [topicId] = ofType('AWS::SNS::Topic').find(([, t]) => JSON.stringify(t.Properties.TopicName ?? '').includes(LIFECYCLE_TOPIC_SUFFIX))!;
    expect(lifecycle[0]![1].Properties).toEqual({
      ServiceToken: expect.anything(), ServiceTimeout: '300', TeardownOnDelete: 'false',
      // The same policy the function applies: a role's replacement changes it, and so makes an Update.
      RotatedKeyPolicy: rotationFunction().Properties.Environment.Variables[ENV.signingKeyPolicy],
    });
    expect(ofType('AWS::SNS::Subscription').filter(([, s]) => s.Properties.TopicArn.Ref === topicId).map(([, s]) => s.Properties))
      .toEqual([{ Protocol: 'lambda', TopicArn: { Ref: topicId }, Endpoint: { 'Fn::GetAtt': [rotationId, 'Arn'] } }]);
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction', Principal: 'sns.amazonaws.com', FunctionName: { 'Fn::GetAtt': [rotationId, 'Arn'] }, SourceArn: { Ref: topicId },
    });
    expect(rotationFunction().Properties.Environment.Variables[ENV.signingKeyStackId]).toEqual({ Ref: 'AWS::StackId' });
    // "The total size of all environment variables doesn't exceed 4 KB" (Lambda quotas); a token counts as what it may become.
    const variables = rotationFunction().Properties.Environment.Variables as Record<string, unknown>;
    const size = Object.entries(variables).reduce((sum, [name, value]) => sum + name.length + JSON.stringify(value).length, 0);
    expect(size).toBeLessThan(3500);
  });

  it('gives the lifecycle resource a ServiceToken that no refactoring changes: the lifecycle topic\'s ARN from pseudo parameters and the stack\'s name, no logical id', () => {
    // CloudFormation refuses to change a custom resource's ServiceToken; a token that names a resource
    // (a function's generated ARN) changes when that resource moves or is renamed.
    const [, lifecycle] = ofType(SIGNING_KEY_LIFECYCLE_TYPE)[0]!;
    const token = lifecycle.Properties.ServiceToken as unknown;
    const named: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'Ref' && typeof value === 'string' && !value.startsWith('AWS::')) named.push(value);
        else if (key === 'Fn::GetAtt' || key === 'Fn::ImportValue') named.push(JSON.stringify(value));
        else walk(value);
      }
    };
    walk(token);
    expect(named).toEqual([]);
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'eu-west-1', 'AWS::AccountId': '123456789012', 'AWS::StackName': 'Test' };
    const resolved = (node: any): string => (typeof node === 'string' ? node
      : node.Ref ? pseudo[node.Ref]! : node['Fn::Join'][1].map(resolved).join(node['Fn::Join'][0]));
    expect(resolved(token)).toBe(`arn:aws:sns:eu-west-1:123456789012:Test${LIFECYCLE_TOPIC_SUFFIX}`);
    const [, topic] = ofType('AWS::SNS::Topic').find(([, t]) => JSON.stringify(t.Properties.TopicName ?? '').includes(LIFECYCLE_TOPIC_SUFFIX))!;
    expect(resolved(topic.Properties.TopicName)).toBe(`Test${LIFECYCLE_TOPIC_SUFFIX}`);
  });

  it('keeps the lifecycle topic, its subscription and the resource in the parent stack, beside each other (the function may move between areas)', () => {
    const app = newApp();
    const stack = new DeviceUserServiceStack(app, 'Test');
    const parent = Template.fromStack(stack).toJSON().Resources as Resources;
    const ids = (type: string) => Object.entries(parent).filter(([, r]) => r.Type === type).map(([id]) => id);
    expect(ids(SIGNING_KEY_LIFECYCLE_TYPE)).toHaveLength(1);
    expect(ids('AWS::SNS::Topic').filter((id) => id.startsWith('SigningKeyLifecycle'))).toHaveLength(1);
    expect(ids('AWS::SNS::Subscription').filter((id) => id.startsWith('SigningKeyLifecycle'))).toHaveLength(1);
  });
});
