import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTestApps } from '../support/cdk-app';
import { nagCheckedStack, type Resource } from '../support/nag-checked';
import { readDeployedForm, synthesizeTemplate } from '../support/deployed-form';

// Fleet provisioning by claim as deployed, read from the template: the provisioning template with its
// pre-provisioning hook, who may invoke the hook, the role IoT Core provisions with, and what a
// factory claim certificate may do. The hook's own role is proven by the IAM test against its calls.

afterAll(removeTestApps);

describe('fleet provisioning: template, hook, claim policy', () => {
  let resources: Record<string, Resource>;
  let nagError: unknown;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  beforeAll(() => {
    ({ resources, nagError } = nagCheckedStack('Fleet'));
  });

  it('passes cdk-nag', () => {
    expect(nagError).toBeUndefined();
  });

  it('the template asks the hook first, makes the thing the hook names, activates the certificate and attaches the device policy', () => {
    const [[id, template]] = ofType('AWS::IoT::ProvisioningTemplate') as [[string, Resource]];
    expect(template.Properties.Enabled).toBe(true);
    const hookFn = template.Properties.PreProvisioningHook.TargetArn['Fn::GetAtt'][0] as string;
    expect(hookFn).toMatch(/PreProvisionDevice/);
    expect(template.Properties.PreProvisioningHook.PayloadVersion).toBe('2020-04-01');
    // The body is JSON with the device policy's name joined in.
    const joined = template.Properties.TemplateBody['Fn::Join'][1] as unknown[];
    const body = JSON.parse(joined.map((part) => (typeof part === 'string' ? part : 'DEVICE_POLICY')).join('')) as Record<string, any>;
    expect(Object.keys(body.Parameters).sort()).toEqual(['AWS::IoT::Certificate::Id', 'SerialNumber', 'ThingName']);
    expect(body.Resources.thing.Properties.ThingName).toEqual({ Ref: 'ThingName' });
    expect(body.Resources.certificate.Properties).toEqual({ CertificateId: { Ref: 'AWS::IoT::Certificate::Id' }, Status: 'ACTIVE' });
    expect(body.Resources.policy.Properties.PolicyName).toBe('DEVICE_POLICY');
    const policyRef = joined.find((part) => typeof part !== 'string') as { Ref: string };
    expect(resources[policyRef.Ref]!.Properties.PolicyDocument.Statement[0].Condition).toEqual({ Bool: { 'iot:Connection.Thing.IsAttached': 'true' } });
    // Only IoT Core, for this template of this account, may invoke the hook; the permission exists before the template.
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.FunctionName['Fn::GetAtt']?.[0] === hookFn) as [string, Resource][];
    expect(permissions).toHaveLength(1);
    const [permissionId, permission] = permissions[0]!;
    expect(permission.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'iot.amazonaws.com', SourceAccount: { Ref: 'AWS::AccountId' } });
    expect(JSON.stringify(permission.Properties.SourceArn)).toContain(`:provisioningtemplate/${template.Properties.TemplateName}`);
    expect((resources[id] as Resource & { DependsOn?: string[] }).DependsOn).toContain(permissionId);
  });

  it('a claim certificate may only get a certificate of its own and register with this template', () => {
    const [template] = ofType('AWS::IoT::ProvisioningTemplate').map(([, t]) => t);
    const claim = ofType('AWS::IoT::Policy').map(([, p]) => p).find((p) => JSON.stringify(p.Properties).includes('$aws/certificates/create'))!;
    const statements = claim.Properties.PolicyDocument.Statement as { Action: string; Resource: unknown }[];
    expect(statements.map((s) => s.Action)).toEqual(['iot:Connect', 'iot:Publish', 'iot:Receive', 'iot:Subscribe']);
    const text = JSON.stringify(statements.slice(1));
    expect(text.match(/\$aws\/[^"]+/g)!.every((topic) => topic.startsWith('$aws/certificates/create/json')
      || topic.startsWith(`$aws/provisioning-templates/${template!.Properties.TemplateName}/provision/json`))).toBe(true);
  });

  it('the hook\'s role reads and updates items of the table and finds a claimed device\'s owner on its index, nothing else (its calls are proven by the IAM test)', () => {
    const form = readDeployedForm(synthesizeTemplate());
    const fn = form.functionOfRoute.get('iot provisioning-hook');
    expect(fn?.id).toMatch(/PreProvisionDevice/);
    const actions = fn!.policies.flatMap(({ document }) => document.Statement).flatMap((s) => [s.Action].flat())
      .filter((action) => !String(action).startsWith('logs:') && !String(action).startsWith('xray:'));
    expect(new Set(actions)).toEqual(new Set(['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
  });
});
