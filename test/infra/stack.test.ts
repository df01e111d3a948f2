import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYED_ROUTES as ROUTES, fallbackRouteKeys, FUNCTIONS, type FunctionDef } from '#infra/routes';
import { DeviceUserServiceStack } from '#infra/stack';

type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string }>;

describe('DeviceUserServiceStack', () => {
  let template: Template;
  let resources: Resources;
  let synthError: unknown;

  // Bundling is skipped here (`cdk synth` in CI bundles every function); the template is the same.
  const newApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] } });

  beforeAll(() => {
    const app = newApp();
    const stack = new DeviceUserServiceStack(app, 'Test');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    template = Template.fromStack(stack);
    resources = template.toJSON().Resources as Resources;
    try {
      app.synth();
    } catch (error) {
      synthError = error;
    }
  });

  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const functionIdOf = (api: string, fn: string) => {
    const pascal = (s: string) => s.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());
    const found = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith(`Apis${pascal(api)}${pascal(fn)}Function`));
    if (!found) throw new Error(`no function for ${api} ${fn}`);
    return found[0];
  };

  it('has a route for every line of the route table, each with its scopes', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    for (const route of ROUTES) {
      const found = routes.find((r) => r.RouteKey === `${route.method} ${route.path}`);
      expect(found, `${route.method} ${route.path}`).toBeDefined();
      if (route.scopes) {
        expect(found!.AuthorizationType).toBe('JWT');
        expect(found!.AuthorizationScopes).toEqual([...route.scopes]);
      } else {
        expect(found!.AuthorizationType ?? 'NONE').toBe('NONE');
      }
    }
    for (const api of ['resource', 'auth'] as const) {
      for (const key of fallbackRouteKeys(api, ROUTES)) {
        expect(routes.some((r) => r.RouteKey === key && (r.AuthorizationType ?? 'NONE') === 'NONE'), key).toBe(true);
      }
    }
    // The resource API has CORS: its fallbacks name their methods, so that no route takes a preflight.
    expect(routes.filter((r) => r.RouteKey === '$default')).toHaveLength(1);
    expect(routes.filter((r) => r.RouteKey.startsWith('OPTIONS '))).toHaveLength(0);
  });

  it('serves every resource route bare and under /api', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey as string);
    for (const key of ['GET /user', 'GET /devices', 'GET /devices/{device_id}', 'PUT /devices/{device_id}']) {
      expect(keys).toContain(key);
      expect(keys).toContain(key.replace(' /', ' /api/'));
    }
  });

  it('verifies tokens with a JWT authorizer trusting the auth API for the resource API audience', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    const authorizer = ofType('AWS::ApiGatewayV2::Authorizer')[0]?.[1];
    expect(authorizer!.Properties.AuthorizerType).toBe('JWT');
    expect(authorizer!.Properties.IdentitySource).toEqual(['$request.header.Authorization']);
    const issuer = JSON.stringify(authorizer!.Properties.JwtConfiguration.Issuer);
    const audience = JSON.stringify(authorizer!.Properties.JwtConfiguration.Audience);
    expect(issuer).toMatch(/ApisAuthApi/);
    expect(audience).toMatch(/ApisResourceApi/);
    expect(authorizer!.Properties.ApiId).toEqual({ Ref: expect.stringMatching(/^ApisResourceApi/) });
  });

  it('runs every function on Node.js 24, arm64, with its own log group', () => {
    const functions = ofType('AWS::Lambda::Function');
    const expected = new Set(ROUTES.map((r) => `${r.api} ${r.fn}`));
    expect(functions).toHaveLength(expected.size + 2); // + one fallback per API
    for (const [, fn] of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.LoggingConfig.LogGroup).toBeDefined();
    }
    for (const [, group] of ofType('AWS::Logs::LogGroup')) expect(group.Properties.RetentionInDays).toBe(30);
  });

  it('keeps the table on demand, with TTL, PITR and deletion protection, and retains it', () => {
    const table = ofType('AWS::DynamoDB::GlobalTable')[0]?.[1];
    expect(table!.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table!.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table!.Properties.Replicas[0].PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table!.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    expect(table!.DeletionPolicy).toBe('Retain');
    expect(table!.Properties.GlobalSecondaryIndexes[0].IndexName).toBe('gsi1');
  });

  it('grants each function exactly the DynamoDB actions the route table lists, on the table only', () => {
    for (const route of ROUTES) {
      const def: FunctionDef = FUNCTIONS[route.fn];
      const roleId = resources[functionIdOf(route.api, route.fn)]!.Properties.Role['Fn::GetAtt'][0];
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
      const dynamo = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
      const onIndex = dynamo.filter((s) => JSON.stringify(s.Resource).includes('/index/gsi1'));
      const onTable = dynamo.filter((s) => !onIndex.includes(s));
      expect(onTable.flatMap((s) => [s.Action].flat()).sort(), route.fn).toEqual((def.table ?? []).map((a) => `dynamodb:${a}`).sort());
      expect(onIndex.flatMap((s) => [s.Action].flat()), route.fn).toEqual(def.index ? ['dynamodb:Query'] : []);
      for (const s of dynamo) expect(JSON.stringify(s.Resource)).not.toContain('*');
    }
  });

  it('keeps the signing key in KMS and lets only the right functions use it', () => {
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' });
    const kmsGrants = ofType('AWS::IAM::Policy').flatMap(([, p]) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
        .flatMap((s) => [s.Action].flat().filter((a) => a.startsWith('kms:')).map((a) => ({ action: a, roles: p.Properties.Roles }))));
    const signers = Object.entries(FUNCTIONS).filter(([, d]) => (d as FunctionDef).signingKey === 'sign').length;
    const verifiers = Object.entries(FUNCTIONS).filter(([, d]) => (d as FunctionDef).signingKey === 'verify').length;
    expect(kmsGrants.filter((g) => g.action === 'kms:Sign')).toHaveLength(signers);
    expect(kmsGrants.filter((g) => g.action === 'kms:GetPublicKey')).toHaveLength(verifiers);
    expect(kmsGrants.every((g) => g.action === 'kms:Sign' || g.action === 'kms:GetPublicKey')).toBe(true);
  });

  it('deploys no local-only route (the outbox)', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey as string);
    expect(keys.some((k) => k.includes('/outbox'))).toBe(false);
  });

  it('lets only the functions that send mail call ses:SendEmail', () => {
    const senders = ofType('AWS::IAM::Policy').filter(([, p]) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).some((s) => [s.Action].flat().includes('ses:SendEmail')));
    const expected = new Set(ROUTES.filter((r) => (FUNCTIONS[r.fn] as FunctionDef).sendsMail).map((r) => r.fn));
    expect(senders).toHaveLength(expected.size);
  });

  it('outputs both URLs and the table name', () => {
    template.hasOutput('ApiUrl', Match.anyValue());
    template.hasOutput('AuthUrl', Match.anyValue());
    template.hasOutput('TableName', Match.anyValue());
  });

  it('passes cdk-nag AwsSolutions with no unacknowledged finding', () => {
    expect(synthError).toBeUndefined();
  });

  it('would report a cdk-nag finding (the check is live)', () => {
    const app = newApp();
    const stack = new DeviceUserServiceStack(app, 'Control');
    new Bucket(stack, 'UnloggedBucket');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-S1/);
  });
});
