import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTestApps } from '../support/cdk-app';
import { nagCheckedStack, type Resource } from '../support/nag-checked';
import { readDeployedForm, synthesizeTemplate } from '../support/deployed-form';

// Fleet provisioning as deployed, read from the template: the provisioning template and its hook,
// who may invoke the hook, and what a claim certificate may do. The hook's own role is proven by the
// IAM test (test/infra/iam-grants.test.ts) against the calls it makes.

afterAll(removeTestApps);

describe('fleet provisioning: template, hook, claim policy', () => {
  let resources: Record<string, Resource>;
  let nagError: unknown;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const template = () => (ofType('AWS::IoT::ProvisioningTemplate') as [[string, Resource]])[0];

  beforeAll(() => {
    ({ resources, nagError } = nagCheckedStack('Fleet'));
  });

  it('passes cdk-nag', () => {
    expect(nagError).toBeUndefined();
  });

  it('the template runs the hook function first, then makes the thing the hook names, activates the certificate and attaches the device policy', () => {
    expect(ofType('AWS::IoT::ProvisioningTemplate')).toHaveLength(1);
    const [, t] = template();
    expect(t.Properties.Enabled).toBe(true);
    const hookId = t.Properties.PreProvisioningHook.TargetArn['Fn::GetAtt'][0] as string;
    expect(hookId).toMatch(/CheckProvisioning/);
    expect(resources[hookId]!.Type).toBe('AWS::Lambda::Function');
    expect(resources[hookId]!.Properties.Timeout).toBeLessThanOrEqual(5);
    expect(t.Properties.PreProvisioningHook.PayloadVersion).toBe('2020-04-01');

    // The body is JSON with the device policy's name spliced in: read it with that name as `<DevicePolicy>`.
    const [, parts] = t.Properties.TemplateBody['Fn::Join'] as [string, (string | { Ref: string })[]];
    const body = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : `<${part.Ref}>`)).join(''));
    expect(parts.filter((part) => typeof part !== 'string')).toEqual([{ Ref: 'DevicePolicy' }]);
    expect(resources.DevicePolicy!.Type).toBe('AWS::IoT::Policy');
    expect(Object.keys(body.Parameters).sort()).toEqual(['AWS::IoT::Certificate::Id', 'SerialNumber', 'ThingName']);
    expect(body.Resources).toEqual({
      thing: { Type: 'AWS::IoT::Thing', Properties: { ThingName: { Ref: 'ThingName' }, AttributePayload: { serial: { Ref: 'SerialNumber' } } } },
      certificate: { Type: 'AWS::IoT::Certificate', Properties: { CertificateId: { Ref: 'AWS::IoT::Certificate::Id' }, Status: 'ACTIVE' } },
      policy: { Type: 'AWS::IoT::Policy', Properties: { PolicyName: '<DevicePolicy>' } },
    });
  });

  it('only IoT Core, for this template of this account, may invoke the hook', () => {
    const [templateId, t] = template();
    const hookId = t.Properties.PreProvisioningHook.TargetArn['Fn::GetAtt'][0] as string;
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.FunctionName['Fn::GetAtt']?.[0] === hookId);
    expect(permissions).toHaveLength(1);
    const [[, permission]] = permissions as [[string, Resource]];
    expect(permission.Properties).toMatchObject({
      Action: 'lambda:InvokeFunction', Principal: 'iot.amazonaws.com', SourceAccount: { Ref: 'AWS::AccountId' },
      SourceArn: { 'Fn::GetAtt': [templateId, 'TemplateArn'] },
    });
  });

  it('a claim certificate may only ask for a certificate and register with this template', () => {
    const claimPolicies = ofType('AWS::IoT::Policy').filter(([id]) => /FleetClaimPolicy/.test(id));
    expect(claimPolicies).toHaveLength(1);
    const statements = claimPolicies[0]![1].Properties.PolicyDocument.Statement as { Effect: string; Action: string; Resource: unknown }[];
    // Each resource ARN with the template's name as `<FleetTemplate>`, after `arn:<partition>:iot:<region>:<account>`.
    const tail = (arn: any) => (arn['Fn::Join'][1] as (string | { Ref: string })[]).slice(6).map((p) => (typeof p === 'string' ? p : `<${p.Ref}>`)).join('');
    expect(statements.map((st) => ({ effect: st.Effect, action: st.Action, resources: [st.Resource].flat().map(tail) }))).toEqual([
      { effect: 'Allow', action: 'iot:Connect', resources: [':client/*'] },
      { effect: 'Allow', action: 'iot:Publish', resources: [':topic/$aws/certificates/create/json', ':topic/$aws/provisioning-templates/<FleetTemplate>/provision/json'] },
      { effect: 'Allow', action: 'iot:Receive', resources: [':topic/$aws/certificates/create/json/*', ':topic/$aws/provisioning-templates/<FleetTemplate>/provision/json/*'] },
      { effect: 'Allow', action: 'iot:Subscribe', resources: [':topicfilter/$aws/certificates/create/json/*', ':topicfilter/$aws/provisioning-templates/<FleetTemplate>/provision/json/*'] },
    ]);
    expect(resources.FleetTemplate!.Type).toBe('AWS::IoT::ProvisioningTemplate');
  });

  it('the hook\'s role only updates items (its calls are proven by the IAM test)', () => {
    const form = readDeployedForm(synthesizeTemplate());
    const fn = form.functionOfRoute.get('iot provisioning-hook');
    expect(fn?.id).toMatch(/CheckProvisioning/);
    const actions = fn!.policies.flatMap(({ document }) => document.Statement).flatMap((s) => [s.Action].flat())
      .filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'));
    expect(new Set(actions)).toEqual(new Set(['dynamodb:UpdateItem']));
  });
});
