import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYED_ROUTES as ROUTES, FUNCTIONS, SCHEDULED_FUNCTIONS } from '#functions/registry';
import { DEFAULT_ROUTE_THROTTLE, fallbackRouteKeys, THROTTLES, type ThrottleClass } from '#shared/routes';
import { SIGNING_KEY_TAG_KEY } from '#shared/keys/kms-keys';
import { ENV, MAIL_ENV } from '#shared/config';
import { DeviceUserServiceStack, StackConfigurationError } from '#infra/stack';
import { removeTestApps, testApp } from '../support/cdk-app';
import { deployedTemplate } from '../support/deployed-form';

type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string[] }>;

/** The sender every test stack is given (a reserved, never-deliverable domain). */
const MAIL_FROM = 'no-reply@mail.stack-test.invalid';
/** The routes that sign a browser in: throttled as logins, and allowed to mail a new browser's alert. */
const SIGN_IN_ROUTES = ['POST /login', 'POST /login/second-factor', 'POST /login/passkey'];

afterAll(removeTestApps);

describe('DeviceUserServiceStack', () => {
  let template: Template;
  let resources: Resources;
  let synthError: unknown;

  const newApp = () => testApp({ mailFrom: MAIL_FROM });

  beforeAll(() => {
    const app = newApp();
    const stack = new DeviceUserServiceStack(app, 'Test');
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    template = Template.fromJSON(deployedTemplate(stack));
    resources = template.toJSON().Resources as Resources;
    try {
      app.synth();
    } catch (error) {
      synthError = error;
    }
  });

  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  it('keeps each API\'s fallback integration under its deployed logical id, whatever order the declarations are found in', () => {
    // CDK would name it after the first fallback route, which follows the order of the declaration files.
    const fallbackIntegrations = ofType('AWS::ApiGatewayV2::Integration').filter(([id]) => /HttpFallback/.test(id) && !/DefaultRoute/.test(id)).map(([id]) => id);
    // The auth API has none beside its `$default` route's own: that route alone takes what no route serves.
    expect(fallbackIntegrations.sort()).toEqual(['ApisResourceApiPOSTuserResourceHttpFallbackB200FF98']);
  });

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
    // The only OPTIONS routes are the declared ones (the token and revocation endpoints' preflights),
    // all on the API without a CORS configuration, the auth API.
    expect(routes.filter((r) => r.RouteKey === '$default')).toHaveLength(1);
    const optionsRoutes = routes.filter((r) => r.RouteKey.startsWith('OPTIONS '));
    expect(optionsRoutes.map((r) => r.RouteKey).sort()).toEqual(ROUTES.filter((r) => r.method === 'OPTIONS').map((r) => `OPTIONS ${r.path}`).sort());
    expect(optionsRoutes.length).toBeGreaterThan(0);
    for (const route of optionsRoutes) {
      expect(resources[(route.ApiId as { Ref: string }).Ref]!.Properties.CorsConfiguration, route.RouteKey).toBeUndefined();
    }
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
    const eventSourced = Object.values(FUNCTIONS).filter((def) => def.eventSource).length;
    // + one fallback per API, + the scheduled ones, + the webhook pipeline's (stream and queue)
    expect(functions).toHaveLength(expected.size + 2 + SCHEDULED_FUNCTIONS.length + eventSourced);
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
    expect(table!.Properties.Replicas[0].PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 35 });
    expect(table!.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    expect(table!.DeletionPolicy).toBe('Retain');
    expect(table!.Properties.GlobalSecondaryIndexes[0].IndexName).toBe('gsi1');
  });

  // Which calls each role needs is proven from behaviour in iam-grants.test.ts; these are the limits
  // no grant may cross, written here independently of the code that derives the grants.
  const functionOfRoute = (routeKey: string) => {
    const route = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey);
    if (!route) throw new Error(`no route ${routeKey}`);
    const integration = resources[route[1].Properties.Target['Fn::Join'][1][1].Ref]!;
    return resources[integration.Properties.IntegrationUri['Fn::GetAtt'][0]]!;
  };
  const statementsOfRoute = (routeKey: string) => statementsOfRole(functionOfRoute(routeKey).Properties.Role['Fn::GetAtt'][0]);
  const statementsOfRole = (roleId: string) => ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
  const allStatements = () => ofType('AWS::IAM::Policy').flatMap(([, p]) =>
    (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]).map((s) => ({ ...s, roles: p.Properties.Roles })));

  it('grants DynamoDB actions only on the table and its gsi1, never a wildcard action or resource', () => {
    const dynamo = allStatements().filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.length).toBeGreaterThan(20);
    for (const s of dynamo) {
      expect([s.Action].flat().every((a) => /^dynamodb:[A-Za-z]+$/.test(a))).toBe(true);
      const resource = JSON.stringify(s.Resource);
      expect(resource).toContain('DataTable');
      expect(resource).not.toContain('*');
      // The index is only ever queried.
      if (resource.includes('/index/')) expect([s.Action].flat()).toEqual(['dynamodb:Query']);
    }
  });

  const rotationFunction = () => {
    const found = ofType('AWS::Lambda::Function').filter(([id]) => id.includes('RotateSigningKey'));
    expect(found).toHaveLength(1);
    return found[0]![1];
  };
  const kmsActions = (statements: { Action: string | string[] }[]) => statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith('kms:'));

  /** The name of this deployment of the stack as the template writes it: the stack name and the unique part of its stack id. */
  const stackGuid = { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] };
  const owner = { 'Fn::Join': ['', ['Test/', stackGuid]] };
  const ownKeyArn = () => ({ 'Fn::GetAtt': [ofType('AWS::KMS::Key')[0]![0], 'Arn'] });

  it('keeps the signing keys in KMS: only the token endpoint signs, only the JWKS and the rotation read public keys, only the rotation manages keys', () => {
    template.hasResourceProperties('AWS::KMS::Key', {
      KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY', Tags: [{ Key: SIGNING_KEY_TAG_KEY, Value: owner }],
    });
    expect(kmsActions(statementsOfRoute('POST /oauth/token'))).toEqual(['kms:Sign']);
    expect(kmsActions(statementsOfRoute('GET /.well-known/jwks.json'))).toEqual(['kms:GetPublicKey']);
    const rotation = statementsOfRole(rotationFunction().Properties.Role['Fn::GetAtt'][0]);
    expect([...new Set(kmsActions(rotation))].sort()).toEqual([
      'kms:CreateAlias', 'kms:CreateKey', 'kms:DeleteAlias', 'kms:GetPublicKey', 'kms:PutKeyPolicy', 'kms:UpdateAlias',
    ]);
    const others = allStatements().filter((s) => kmsActions([s]).length > 0).map((s) => kmsActions([s])).flat();
    expect([...new Set(others)].sort()).toEqual([
      'kms:CreateAlias', 'kms:CreateKey', 'kms:DeleteAlias', 'kms:GetPublicKey', 'kms:PutKeyPolicy', 'kms:Sign', 'kms:UpdateAlias',
    ]);
  });

  it('grants KMS actions only on the stack\'s key by its ARN, on its two aliases, CreateKey, and PutKeyPolicy on RSA signing keys; no role may tag, and no grant follows a tag', () => {
    const kms = allStatements().filter((s) => kmsActions([s]).length > 0) as { Action: string | string[]; Resource: unknown; Condition?: unknown }[];
    expect(kms.length).toBeGreaterThanOrEqual(5);
    for (const s of kms) {
      const resource = JSON.stringify(s.Resource);
      expect(JSON.stringify(s.Condition ?? {})).not.toMatch(/Tag/);
      if ([s.Action].flat().includes('kms:PutKeyPolicy')) {
        expect([s.Action].flat()).toEqual(['kms:PutKeyPolicy']);
        expect(resource).toContain(':key/*');
        expect(s.Condition).toEqual({ StringEquals: { 'kms:KeySpec': 'RSA_2048', 'kms:KeyUsage': 'SIGN_VERIFY', 'kms:CallerAccount': { Ref: 'AWS::AccountId' } } });
        continue;
      }
      expect(s.Condition).toBeUndefined();
      if (resource === '"*"') {
        expect([s.Action].flat()).toEqual(['kms:CreateKey']);
      } else if (resource.includes(':alias/')) {
        expect(resource).toContain(':alias/Test-signing-*');
        expect([s.Action].flat().sort()).toEqual(['kms:CreateAlias', 'kms:DeleteAlias', 'kms:UpdateAlias']);
      } else {
        expect(s.Resource).toEqual(ownKeyArn());
      }
    }
  });

  // The rotated keys' policy and the lifecycle resource: signing-key-lifecycle.test.ts.
  it('runs the signing-key rotation every hour from an EventBridge rule, with the deployment\'s name and the alias prefix', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0]!;
    expect(rule.Properties.ScheduleExpression).toBe('rate(1 hour)');
    expect(rule.Properties.Targets).toEqual([expect.objectContaining({
      Arn: { 'Fn::GetAtt': [expect.stringContaining('RotateSigningKey'), 'Arn'] },
      Input: JSON.stringify({ mode: 'when-due' }),
    })]);
    expect(rotationFunction().Properties.Environment.Variables).toMatchObject({
      [ENV.signingKeyTag]: owner, [ENV.signingKeyAliasPrefix]: 'alias/Test-signing',
    });
    template.hasOutput('RotateSigningKeyFunctionName', Match.anyValue());
  });

  it('deploys no local-only route (the outbox)', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey as string);
    expect(keys.some((k) => k.includes('/outbox'))).toBe(false);
  });

  it('lets only the four functions that send account e-mail, the three sign-ins (a new browser’s alert) and the webhook delivery (a disabled webhook’s notice) call ses:SendEmail', () => {
    const senders = allStatements().filter((s) => [s.Action].flat().includes('ses:SendEmail'));
    expect(senders).toHaveLength(8);
    for (const routeKey of ['POST /signup', 'POST /confirm-email/resend', 'POST /password-reset', 'POST /account/delete', ...SIGN_IN_ROUTES]) {
      expect(statementsOfRoute(routeKey).some((s) => [s.Action].flat().includes('ses:SendEmail')), routeKey).toBe(true);
    }
  });

  it('sends account e-mail as the mailFrom it was given: MAIL_FROM and the ses:SendEmail resource', () => {
    for (const routeKey of ['POST /signup', 'POST /confirm-email/resend', 'POST /password-reset', 'POST /account/delete', ...SIGN_IN_ROUTES]) {
      const fn = functionOfRoute(routeKey);
      expect(fn.Properties.Environment.Variables[MAIL_ENV.sender], routeKey).toBe(MAIL_FROM);
      const statements = statementsOfRole(fn.Properties.Role['Fn::GetAtt'][0]).filter((s) => [s.Action].flat().includes('ses:SendEmail'));
      expect(statements, routeKey).toHaveLength(1);
      expect(JSON.stringify(statements[0]!.Resource), routeKey).toContain(`:identity/${MAIL_FROM}`);
    }
    // No function is configured with any other sender.
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect([undefined, MAIL_FROM]).toContain(fn.Properties.Environment?.Variables?.[MAIL_ENV.sender]);
    }
  });

  // API Gateway's account-level limits per region (all APIs of the account together): no route may ask for more.
  const ACCOUNT_RATE = 10_000;
  const ACCOUNT_BURST = 5_000;
  const stageOf = (api: 'ResourceApi' | 'AuthApi') => {
    const stages = ofType('AWS::ApiGatewayV2::Stage').filter(([, s]) => s.Properties.ApiId.Ref.startsWith(`Apis${api}`));
    expect(stages).toHaveLength(1);
    return stages[0]!;
  };
  const routeSettingsOf = (api: 'ResourceApi' | 'AuthApi') =>
    stageOf(api)[1].Properties.RouteSettings as Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
  const throttleOf = (routeKey: string) => ({ ...routeSettingsOf('ResourceApi'), ...routeSettingsOf('AuthApi') })[routeKey];
  const classOf = (routeKey: string) => ROUTES.find((r) => `${r.method} ${r.path}` === routeKey)!.throttle;

  it('throttles every route key of the table with the rate and burst of its class, on the stage of its API', () => {
    for (const [api, name] of [['resource', 'ResourceApi'], ['auth', 'AuthApi']] as const) {
      const settings = routeSettingsOf(name);
      const routes = ROUTES.filter((r) => r.api === api);
      expect(Object.keys(settings).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
      for (const route of routes) {
        expect(settings[`${route.method} ${route.path}`], `${route.method} ${route.path}`).toEqual({
          ThrottlingRateLimit: THROTTLES[route.throttle].rateLimit, ThrottlingBurstLimit: THROTTLES[route.throttle].burstLimit,
        });
      }
    }
    for (const throttle of [...Object.values(THROTTLES), DEFAULT_ROUTE_THROTTLE]) {
      expect(throttle.rateLimit).toBeGreaterThan(0);
      expect(throttle.rateLimit).toBeLessThanOrEqual(ACCOUNT_RATE);
      expect(throttle.burstLimit).toBeGreaterThanOrEqual(throttle.rateLimit);
      expect(throttle.burstLimit).toBeLessThanOrEqual(ACCOUNT_BURST);
      expect(throttle.reason.length).toBeGreaterThan(40);
    }
  });

  it('gives the 405/404 fallbacks, the only routes without settings, the stage default throttle', () => {
    for (const [api, name] of [['resource', 'ResourceApi'], ['auth', 'AuthApi']] as const) {
      const [, stage] = stageOf(name);
      expect(stage.Properties.DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: DEFAULT_ROUTE_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_ROUTE_THROTTLE.burstLimit,
      });
      for (const key of fallbackRouteKeys(api, ROUTES)) expect(stage.Properties.RouteSettings[key], key).toBeUndefined();
      // An unknown path or method never has more room than the pages people use.
      expect(DEFAULT_ROUTE_THROTTLE.rateLimit).toBeLessThan(THROTTLES.page.rateLimit);
    }
  });

  it('puts each limit where it belongs: reads, device writes, token, login and mail pages apart', () => {
    const keysOf = (throttle: ThrottleClass) => ROUTES.filter((r) => r.throttle === throttle).map((r) => `${r.method} ${r.path}`).sort();
    // Every read of the resource API that needs a token is a resource read, every write a device write.
    const scoped = ROUTES.filter((r) => r.api === 'resource' && r.scopes);
    expect(keysOf('resource-read')).toEqual(scoped.filter((r) => r.method === 'GET').map((r) => `${r.method} ${r.path}`).sort());
    expect(keysOf('device-write')).toEqual(scoped.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`).sort());
    expect(keysOf('resource-read')).toEqual(expect.arrayContaining(['GET /api/devices', 'GET /api/devices/{device_id}', 'GET /api/user',
      'GET /devices', 'GET /devices/{device_id}', 'GET /user']));
    expect(keysOf('device-write')).toEqual(expect.arrayContaining(['PUT /api/devices/{device_id}', 'PUT /devices/{device_id}']));
    expect(keysOf('login')).toEqual([...SIGN_IN_ROUTES].sort());
    // The token class is exactly the routes whose function may sign (kms:Sign), and half the KMS RSA quota (500/s) at most.
    const may = (routeKey: string, action: string) => statementsOfRoute(routeKey).some((s) => [s.Action].flat().includes(action));
    const deployedKeys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(keysOf('token')).toEqual(deployedKeys.filter((key) => may(key, 'kms:Sign')).sort());
    expect(keysOf('token')).toEqual(['POST /oauth/token']);
    expect(throttleOf('POST /oauth/token')!.ThrottlingRateLimit).toBeLessThanOrEqual(250);
    expect(throttleOf('POST /oauth/token')!.ThrottlingBurstLimit).toBeLessThanOrEqual(250);
    // The mail class is exactly the routes whose function may send e-mail at a person's request, and together they stay
    // under SES's 14/s; the sign-ins (login class) also may, for the alert of a browser new to the account, best effort
    // (a refused send leaves the sign-in as it is), and only after a right password, code or passkey.
    const mailKeys = deployedKeys.filter((key) => may(key, 'ses:SendEmail') && !SIGN_IN_ROUTES.includes(key)).sort();
    for (const key of SIGN_IN_ROUTES) expect(may(key, 'ses:SendEmail'), key).toBe(true);
    expect(keysOf('mail')).toEqual(mailKeys);
    expect(mailKeys.reduce((sum, key) => sum + throttleOf(key)!.ThrottlingRateLimit, 0)).toBeLessThan(14);
    // Login, mail and token are each far below the resource reads the apps poll with.
    for (const key of ['POST /login', 'POST /signup', 'POST /oauth/token']) {
      expect(throttleOf(key)!.ThrottlingRateLimit, key).toBeLessThan(throttleOf('GET /devices')!.ThrottlingRateLimit);
    }
    expect(classOf('GET /devices')).toBe('resource-read');
  });

  it('creates each stage after every route of its API (route settings may only name existing routes)', () => {
    for (const name of ['ResourceApi', 'AuthApi'] as const) {
      const [, stage] = stageOf(name);
      const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId.Ref.startsWith(`Apis${name}`));
      expect(routes.length).toBeGreaterThan(5);
      for (const [id] of routes) expect(stage.DependsOn ?? [], id).toContain(id);
    }
  });

  it('the fallbacks share one invoke permission per API (each stack\'s size: stack-size.test.ts)', () => {
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties)
      .filter((p) => p.Principal === 'apigateway.amazonaws.com');
    // The part of the source ARN after the API id: stage, method and path, each possibly a wildcard.
    const routePart = (p: Record<string, any>) => /(\/[^"]*)"\]\]\}$/.exec(JSON.stringify(p.SourceArn))?.[1];
    const fallbacks = permissions.filter((p) => JSON.stringify(p.FunctionName).includes('HttpFallback'));
    // One API-wide permission for the resource API's 405/404 routes, and one for the auth API's `$default` route (its only fallback).
    expect(fallbacks.map(routePart).sort()).toEqual(['/*/*', '/*/*/*']);
    // Every other function may be invoked only through its own routes.
    const others = permissions.filter((p) => !fallbacks.includes(p));
    expect(others.length).toBeGreaterThan(40);
    for (const p of others) expect(routePart(p)).toMatch(/^\/\*\/\*\/([^*]|$)/);
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

describe('DeviceUserServiceStack without a usable mailFrom', () => {
  const stackWith = (context: Record<string, unknown>) =>
    () => new DeviceUserServiceStack(testApp(context), 'NoSender');

  it.each([{}, { mailFrom: '' }])('refuses to build without it, naming mailFrom and what it must be (%j)', (context) => {
    expect(stackWith(context)).toThrow(StackConfigurationError);
    expect(stackWith(context)).toThrow(/context value 'mailFrom' is required: .*verified in Amazon SES.* -c mailFrom=/);
  });

  it('stops the CDK app (cdk synth, cdk deploy) with that message alone', async () => {
    const { CDK_CONTEXT_JSON: _context, ...env } = process.env;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      execFile(process.execPath, [resolve('node_modules/tsx/dist/cli.mjs'), resolve('infra/app.ts')], { env, timeout: 60_000 },
        (error, _stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }));
    });
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^The CDK context value 'mailFrom' is required: [^\n]*$/);
  }, 60_000);

  it.each(['no-reply', 'no-reply@', '@example.com', 'no-reply@localhost', 'Service <no-reply@example.com>', 'no reply@example.com',
    'no-reply@example.com ', '.no-reply@example.com', 'no..reply@example.com', 'no-reply@-example.com', 'no-reply@example.c'])(
    'refuses the malformed sender %j, naming it', (mailFrom) => {
      expect(stackWith({ mailFrom })).toThrow(`'mailFrom' must be a plain e-mail address`);
      expect(stackWith({ mailFrom })).toThrow(JSON.stringify(mailFrom));
    });

  it('refuses a value that is not a string', () => {
    expect(stackWith({ mailFrom: 42 })).toThrow(/'mailFrom' must be a plain e-mail address .*got 42/);
  });

  it.each(['no-reply@example.org', 'accounts+alerts@mail.example-service.co.uk', MAIL_FROM])('accepts the plain address %s', (mailFrom) => {
    expect(stackWith({ mailFrom })).not.toThrow();
  });
});
