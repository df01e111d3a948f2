import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Validations, type StackProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV } from '#shared/config';
import { createServiceStack, DeviceUserServiceStack, StackConfigurationError } from '#infra/stack';
import { SIGNING_KEY_LIFECYCLE_TYPE } from '#infra/constructs/signing-key-lifecycle';
import { removeTestApps, testApp } from '../support/cdk-app';
import { deployedTemplate } from '../support/deployed-form';

// The optional context values of infra/settings.ts: custom domains (a stable issuer) and stages.

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string; DependsOn?: string[] };

const MAIL_FROM = 'no-reply@mail.stack-test.invalid';
const ZONE_ID = 'Z0123456789ABCDEFGHIJ';
const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const ENVIRONMENT: StackProps = { env: { account: '123456789012', region: 'eu-west-1' } };

afterAll(removeTestApps);

interface Synthesized {
  stack: DeviceUserServiceStack;
  template: Template;
  resources: Record<string, Resource>;
  ofType: (type: string) => [string, Resource][];
}

function synthesize(context: Record<string, unknown>, props: StackProps = ENVIRONMENT, nag = false): Synthesized {
  const app = testApp({ mailFrom: MAIL_FROM, ...context });
  const stack = createServiceStack(app, props);
  if (nag) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    app.synth();
  }
  const template = Template.fromJSON(deployedTemplate(stack));
  const resources = template.toJSON().Resources as Record<string, Resource>;
  return { stack, template, resources, ofType: (type) => Object.entries(resources).filter(([, r]) => r.Type === type) };
}

const CUSTOM_DOMAIN_TYPES = ['AWS::ApiGatewayV2::DomainName', 'AWS::ApiGatewayV2::ApiMapping', 'AWS::CertificateManager::Certificate', 'AWS::Route53::RecordSet'];

/** The issuer and audience every function is configured with, and the ones the JWT authorizer trusts. */
function tokenSettings({ ofType }: Synthesized) {
  const functions = ofType('AWS::Lambda::Function').map(([, fn]) => fn.Properties.Environment.Variables as Record<string, unknown>);
  const [[, authorizer]] = ofType('AWS::ApiGatewayV2::Authorizer') as [[string, Resource]];
  return {
    issuers: [...new Set(functions.map((env) => JSON.stringify(env[ENV.issuer])))].map((v) => JSON.parse(v) as unknown),
    audiences: [...new Set(functions.map((env) => JSON.stringify(env[ENV.audience])))].map((v) => JSON.parse(v) as unknown),
    authorizerIssuer: authorizer.Properties.JwtConfiguration.Issuer as unknown,
    authorizerAudience: authorizer.Properties.JwtConfiguration.Audience as unknown,
  };
}

/** The logical id of the API whose routes carry the JWT authorizer (the resource API), and of the other one. */
function apiIds({ ofType }: Synthesized) {
  const [[, authorizer]] = ofType('AWS::ApiGatewayV2::Authorizer') as [[string, Resource]];
  const resource = authorizer.Properties.ApiId.Ref as string;
  const auth = ofType('AWS::ApiGatewayV2::Api').map(([id]) => id).find((id) => id !== resource)!;
  return { resource, auth };
}

describe('without custom domains: the execute-api URLs, as before', () => {
  const synthesized = synthesize({});

  it('creates no domain name, mapping, certificate or record', () => {
    for (const type of CUSTOM_DOMAIN_TYPES) synthesized.template.resourceCountIs(type, 0);
  });

  it('issues and verifies tokens for the execute-api URLs of the APIs', () => {
    const { auth, resource } = apiIds(synthesized);
    const executeApiUrl = (apiId: string) => ({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    const settings = tokenSettings(synthesized);
    expect(settings.issuers).toEqual([executeApiUrl(auth)]);
    expect(settings.audiences).toEqual([executeApiUrl(resource)]);
    expect(settings.authorizerIssuer).toEqual(executeApiUrl(auth));
    expect(settings.authorizerAudience).toEqual([executeApiUrl(resource)]);
    synthesized.template.hasOutput('AuthUrl', { Value: executeApiUrl(auth) });
    synthesized.template.hasOutput('ApiUrl', { Value: executeApiUrl(resource) });
  });
});

describe('custom domains in a Route 53 zone', () => {
  const synthesized = synthesize({ domain: 'example.com', hostedZoneId: ZONE_ID }, ENVIRONMENT, true);
  const { template, ofType } = synthesized;

  it('issues and verifies tokens for https://auth.example.com and https://api.example.com, and outputs them', () => {
    expect(tokenSettings(synthesized)).toEqual({
      issuers: ['https://auth.example.com'],
      audiences: ['https://api.example.com'],
      authorizerIssuer: 'https://auth.example.com',
      authorizerAudience: ['https://api.example.com'],
    });
    template.hasOutput('AuthUrl', { Value: 'https://auth.example.com' });
    template.hasOutput('ApiUrl', { Value: 'https://api.example.com' });
  });

  it('requests one certificate for both hosts, validated by DNS in the zone', () => {
    template.resourceCountIs('AWS::CertificateManager::Certificate', 1);
    template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'auth.example.com',
      SubjectAlternativeNames: ['api.example.com'],
      ValidationMethod: 'DNS',
      DomainValidationOptions: [
        { DomainName: 'auth.example.com', HostedZoneId: ZONE_ID },
        { DomainName: 'api.example.com', HostedZoneId: ZONE_ID },
      ],
    });
  });

  it('maps each API\'s stage at the root of its own host, over TLS 1.2, with an alias record each', () => {
    const { auth, resource } = apiIds(synthesized);
    const [[certificateId]] = ofType('AWS::CertificateManager::Certificate') as [[string, Resource]];
    const domains = ofType('AWS::ApiGatewayV2::DomainName');
    expect(domains.map(([, d]) => d.Properties.DomainName).sort()).toEqual(['api.example.com', 'auth.example.com']);
    for (const [, domain] of domains) {
      expect(domain.Properties.DomainNameConfigurations).toEqual([
        { CertificateArn: { Ref: certificateId }, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
      ]);
    }
    const domainId = (host: string) => domains.find(([, d]) => d.Properties.DomainName === host)![0];
    const stageOf = (apiId: string) => ofType('AWS::ApiGatewayV2::Stage').find(([, s]) => s.Properties.ApiId.Ref === apiId)![0];
    // The stage is named `$default`: the mapping waits for the stage to exist.
    const mappings = ofType('AWS::ApiGatewayV2::ApiMapping').map(([, m]) => ({ ...m.Properties, DependsOn: m.DependsOn }));
    expect(mappings).toHaveLength(2);
    expect(mappings).toContainEqual({ ApiId: { Ref: auth }, DomainName: { Ref: domainId('auth.example.com') }, Stage: '$default', DependsOn: [stageOf(auth)] });
    expect(mappings).toContainEqual({ ApiId: { Ref: resource }, DomainName: { Ref: domainId('api.example.com') }, Stage: '$default', DependsOn: [stageOf(resource)] });
    const records = ofType('AWS::Route53::RecordSet').map(([, r]) => r.Properties);
    expect(records).toHaveLength(2);
    for (const host of ['auth.example.com', 'api.example.com']) {
      expect(records).toContainEqual({
        Name: `${host}.`,
        Type: 'A',
        HostedZoneId: ZONE_ID,
        AliasTarget: {
          DNSName: { 'Fn::GetAtt': [domainId(host), 'RegionalDomainName'] },
          HostedZoneId: { 'Fn::GetAtt': [domainId(host), 'RegionalHostedZoneId'] },
        },
      });
    }
  });

  it('passes cdk-nag AwsSolutions (the app synthesized with the checks)', () => {
    // synthesize(…, nag = true) threw otherwise.
    expect(ofType('AWS::ApiGatewayV2::DomainName')).toHaveLength(2);
  });

  it('accepts a zone that is a parent of the domain', () => {
    const { template: parent } = synthesize({ domain: 'id.example.co.uk', hostedZoneId: ZONE_ID, hostedZoneName: 'example.co.uk' });
    parent.hasResourceProperties('AWS::Route53::RecordSet', { Name: 'auth.id.example.co.uk.', HostedZoneId: ZONE_ID });
    parent.hasOutput('AuthUrl', { Value: 'https://auth.id.example.co.uk' });
  });
});

describe('custom domains on a certificate of the operator\'s, without a zone', () => {
  const synthesized = synthesize({ domain: 'example.org', certificateArn: CERTIFICATE_ARN });
  const { template, ofType } = synthesized;

  it('uses the certificate, writes no record, and outputs where to point each host', () => {
    template.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    template.resourceCountIs('AWS::Route53::RecordSet', 0);
    template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 2);
    const domains = ofType('AWS::ApiGatewayV2::DomainName');
    expect(domains).toHaveLength(2);
    for (const [, domain] of domains) expect(domain.Properties.DomainNameConfigurations[0].CertificateArn).toBe(CERTIFICATE_ARN);
    const domainId = (host: string) => domains.find(([, d]) => d.Properties.DomainName === host)![0];
    template.hasOutput('AuthDnsTarget', { Value: { 'Fn::GetAtt': [domainId('auth.example.org'), 'RegionalDomainName'] } });
    template.hasOutput('ApiDnsTarget', { Value: { 'Fn::GetAtt': [domainId('api.example.org'), 'RegionalDomainName'] } });
    expect(tokenSettings(synthesized)).toMatchObject({ issuers: ['https://auth.example.org'], authorizerAudience: ['https://api.example.org'] });
  });
});

describe('stages', () => {
  const retained = (r: Resource) => r.DeletionPolicy === 'Retain' || r.UpdateReplacePolicy === 'Retain';

  it('without a stage: the stack DeviceUserService as before, data kept and protected', () => {
    const { stack, ofType } = synthesize({});
    expect(stack.stackName).toBe('DeviceUserService');
    expect(stack.terminationProtection).toBe(true);
    expect(stack.tags.tagValues()).toEqual({});
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, Resource]];
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    expect(ofType('AWS::KMS::Key')[0]![1].DeletionPolicy).toBe('Retain');
    expect(ofType('AWS::ApiGatewayV2::Api').map(([, api]) => api.Properties.Name).sort()).toEqual(['AuthApi', 'ResourceApi']);
  });

  it('prod: DeviceUserService-prod, its APIs named after it, table and key retained, deletion and termination protection', () => {
    const { stack, ofType } = synthesize({ stage: 'prod' });
    expect(stack.stackName).toBe('DeviceUserService-prod');
    expect(stack.terminationProtection).toBe(true);
    expect(stack.tags.tagValues()).toEqual({ Stage: 'prod' });
    expect(ofType('AWS::ApiGatewayV2::Api').map(([, api]) => api.Properties.Name).sort())
      .toEqual(['DeviceUserService-prod-auth', 'DeviceUserService-prod-resource']);
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, Resource]];
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    const [[, key]] = ofType('AWS::KMS::Key') as [[string, Resource]];
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.Properties.PendingWindowInDays).toBeUndefined();
  });

  it('dev: DeviceUserService-dev, destroyed whole: nothing retained, no deletion or termination protection', () => {
    const { stack, resources, ofType } = synthesize({ stage: 'dev' });
    expect(stack.stackName).toBe('DeviceUserService-dev');
    expect(stack.terminationProtection).toBe(false);
    expect(Object.entries(resources).filter(([, r]) => retained(r)).map(([id]) => id)).toEqual([]);
    const [[, table]] = ofType('AWS::DynamoDB::GlobalTable') as [[string, Resource]];
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(false);
    const [[, key]] = ofType('AWS::KMS::Key') as [[string, Resource]];
    expect(key.DeletionPolicy).toBe('Delete');
    expect(key.Properties.PendingWindowInDays).toBe(7);
    const logGroups = ofType('AWS::Logs::LogGroup');
    expect(logGroups.length).toBeGreaterThan(10);
    for (const [, group] of logGroups) expect(group.DeletionPolicy).toBe('Delete');
  });

  it('only a dev stage deletes, with the stack, the keys its rotations created and their aliases (the lifecycle resource\'s teardown)', () => {
    const teardown = (context: Record<string, unknown>) => synthesize(context).ofType(SIGNING_KEY_LIFECYCLE_TYPE)
      .map(([, resource]) => resource.Properties.TeardownOnDelete as string);
    expect(teardown({ stage: 'dev' })).toEqual(['true']);
    expect(teardown({ stage: 'devanna' })).toEqual(['true']);
    // Every stage records its key at deployment; one that keeps its data keeps its rotated keys too.
    expect(teardown({ stage: 'prod' })).toEqual(['false']);
    expect(teardown({ stage: 'staging' })).toEqual(['false']);
    expect(teardown({})).toEqual(['false']);
  });

  it('another stage keeps its data unless its name starts with dev', () => {
    expect(synthesize({ stage: 'staging' }).stack.terminationProtection).toBe(true);
    const devAnna = synthesize({ stage: 'devanna' });
    expect(devAnna.stack.stackName).toBe('DeviceUserService-devanna');
    expect(devAnna.ofType('AWS::DynamoDB::GlobalTable')[0]![1].DeletionPolicy).toBe('Delete');
  });
});

describe('CDK feature flags', () => {
  it('are the recommended set of the installed aws-cdk-lib, but for the exception the README explains', () => {
    const read = (path: string) => JSON.parse(readFileSync(resolve(path), 'utf8')) as Record<string, any>;
    const recommended = read('node_modules/aws-cdk-lib/recommended-feature-flags.json');
    const flags = Object.fromEntries(Object.entries(read('cdk.json').context as Record<string, unknown>).filter(([name]) => name.startsWith('@aws-cdk')));
    const { '@aws-cdk/core:enableDiffNoFail': diffNoFail, ...rest } = flags;
    expect(diffNoFail).toBe(true);
    expect(rest).toEqual({ ...recommended, '@aws-cdk/core:enableAdditionalMetadataCollection': false });
    expect(readFileSync('docs/deploying.md', 'utf8')).toContain('`@aws-cdk/core:enableAdditionalMetadataCollection`, off');
  });

  it('are the ones the template tests synthesize with', () => {
    const app = testApp({});
    expect(app.node.tryGetContext('@aws-cdk/aws-iam:minimizePolicies')).toBe(true);
    expect(app.node.tryGetContext('@aws-cdk/core:enableAdditionalMetadataCollection')).toBe(false);
  });
});

describe('malformed deployment settings stop synthesis with one line naming the value', () => {
  const build = (context: Record<string, unknown>) => () => createServiceStack(testApp({ mailFrom: MAIL_FROM, ...context }), ENVIRONMENT);
  const refuses = (context: Record<string, unknown>, message: RegExp) => {
    let error: unknown;
    try {
      build(context)();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StackConfigurationError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  };

  it.each(['Prod', 'prod-1', 'prod_1', '', 'thirteenchars', 'dév', ' dev', 42])('stage %j', (stage) => {
    refuses({ stage }, new RegExp(`^The CDK context value 'stage' must be a stage name of 1 to 12 lowercase letters or digits.*got ${escape(JSON.stringify(stage))}`));
  });

  it.each(['Example.com', 'https://example.com', 'example.com.', 'example.com/', 'example.com:443', 'example', '-bad.example.com',
    'bad-.example.com', '*.example.com', 'exa mple.com', 'example.c', '', `${'a'.repeat(64)}.example.com`, true])('domain %j', (domain) => {
    refuses({ domain, hostedZoneId: ZONE_ID }, new RegExp(`^The CDK context value 'domain' must be a lowercase DNS name.*got ${escape(JSON.stringify(domain))}`));
  });

  it.each(['z0123456789ABCDEFGHIJ', '/hostedzone/Z0123456789ABCDEFGHIJ', 'Z12', 'Z0123456789ABCDEF-HIJ', ''])('hostedZoneId %j', (hostedZoneId) => {
    refuses({ domain: 'example.com', hostedZoneId }, new RegExp(`^The CDK context value 'hostedZoneId' must be a Route 53 hosted zone id.*got ${escape(JSON.stringify(hostedZoneId))}`));
  });

  it.each(['other.com', 'ple.com', 'sub.example.com', 'example.com.', 'Example.com', ''])('hostedZoneName %j for the domain example.com', (hostedZoneName) => {
    refuses({ domain: 'example.com', hostedZoneId: ZONE_ID, hostedZoneName },
      new RegExp(`^The CDK context value 'hostedZoneName' must be the name of the hosted zone.*got ${escape(JSON.stringify(hostedZoneName))}`));
  });

  it.each(['not-an-arn', '', 'arn:aws:acm:eu-west-1:123456789012:certificate/not-a-uuid', 'arn:aws:acm:eu-west-1:1234:certificate/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
    'arn:aws:iam::123456789012:server-certificate/example', `${CERTIFICATE_ARN} `])('certificateArn %j', (certificateArn) => {
    refuses({ domain: 'example.com', certificateArn }, new RegExp(`^The CDK context value 'certificateArn' must be the ARN of an ACM certificate.*got ${escape(JSON.stringify(certificateArn))}`));
  });

  it('a certificate in another region than the stack\'s', () => {
    refuses({ domain: 'example.com', certificateArn: CERTIFICATE_ARN.replace('eu-west-1', 'us-east-1') },
      /^The CDK context value 'certificateArn' must be a certificate in the stack's region eu-west-1 \(custom domains of HTTP APIs are regional\)/);
  });

  it('a domain with neither zone nor certificate, and a zone or certificate without domain', () => {
    refuses({ domain: 'example.com' }, /^The CDK context value 'domain' needs 'hostedZoneId' .* or 'certificateArn' .*-c domain=example.com -c hostedZoneId=/);
    refuses({ hostedZoneId: ZONE_ID }, /^The CDK context value 'hostedZoneId' needs 'domain' too/);
    refuses({ certificateArn: CERTIFICATE_ARN }, /^The CDK context value 'certificateArn' needs 'domain' too/);
    refuses({ domain: 'example.com', certificateArn: CERTIFICATE_ARN, hostedZoneName: 'example.com' }, /^The CDK context value 'hostedZoneName' needs 'hostedZoneId' too/);
  });

  it('accepts well-formed values', () => {
    expect(build({ stage: 'dev2', domain: 'example.com', hostedZoneId: ZONE_ID, certificateArn: CERTIFICATE_ARN })).not.toThrow();
    expect(build({ stage: 'a', domain: 'xn--bcher-kva.example', hostedZoneId: 'Z1D633PJN98FT9' })).not.toThrow();
    // Without a known region, the certificate's region cannot be compared.
    expect(() => createServiceStack(testApp({ mailFrom: MAIL_FROM, domain: 'example.com', certificateArn: CERTIFICATE_ARN.replace('eu-west-1', 'us-east-1') })))
      .not.toThrow();
  });

  it('stops the CDK app (cdk synth, cdk deploy) with that line alone', async () => {
    const { CDK_CONTEXT_JSON: _context, ...env } = process.env;
    const context = JSON.stringify({ mailFrom: MAIL_FROM, domain: 'https://example.com', hostedZoneId: ZONE_ID });
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      execFile(process.execPath, [resolve('node_modules/tsx/dist/cli.mjs'), resolve('infra/app.ts')], { env: { ...env, CDK_CONTEXT_JSON: context }, timeout: 60_000 },
        (error, _stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }));
    });
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^The CDK context value 'domain' must be a lowercase DNS name [^\n]*"https:\/\/example.com"\.$/);
  }, 60_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
