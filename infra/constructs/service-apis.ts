import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod, HttpApi, HttpMethod, HttpRoute, HttpRouteKey, HttpStage, LogGroupLogDestination, type CorsPreflightOptions,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  API_CORS, DEPLOYED_ROUTES, FALLBACK_FUNCTION, fallbackRouteKeys, FUNCTIONS, type ApiName, type CorsSettings, type FunctionDef,
  type FunctionName,
} from '#shared/routes';
import { FUNCTION_NEEDS, tableGrantOf } from '#infra/function-grants';
import { ENV, MAIL_ENV } from '#shared/config';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Stack } from 'aws-cdk-lib';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { SigningKey } from '#infra/constructs/signing-key';

export interface ServiceApisProps {
  table: ITableV2;
  signingKey: SigningKey;
  /** Verified SES sender of account e-mail (confirmation, password reset). */
  mailFrom: string;
  /** Requests per second each API accepts before API Gateway answers 429. */
  throttle?: { rateLimit: number; burstLimit: number };
}

/**
 * Both HTTP APIs, built from the route table: the resource API behind a JWT authorizer that
 * trusts the auth API as issuer, and the auth API. One function per FUNCTIONS entry per API.
 */
export class ServiceApis extends Construct {
  readonly resourceApi: HttpApi;
  readonly authApi: HttpApi;
  readonly functions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: ServiceApisProps) {
    super(scope, id);
    this.authApi = new HttpApi(this, 'AuthApi', {
      createDefaultStage: false,
      description: 'Device and User Service: authorization server',
      corsPreflight: corsPreflight(API_CORS.auth),
    });
    this.resourceApi = new HttpApi(this, 'ResourceApi', {
      createDefaultStage: false,
      description: 'Device and User Service: resource API',
      corsPreflight: corsPreflight(API_CORS.resource),
    });
    const environment = {
      [ENV.tableName]: props.table.tableName,
      [ENV.issuer]: this.authApi.apiEndpoint,
      [ENV.audience]: this.resourceApi.apiEndpoint,
      [ENV.signingKeyId]: props.signingKey.key.keyId,
      [MAIL_ENV.sender]: props.mailFrom,
    };
    const authorizer = new HttpJwtAuthorizer('AccessToken', this.authApi.apiEndpoint, {
      jwtAudience: [this.resourceApi.apiEndpoint],
      identitySource: ['$request.header.Authorization'],
    });

    for (const [api, httpApi] of [['resource', this.resourceApi], ['auth', this.authApi]] as const) {
      const integrations = new Map<FunctionName, HttpLambdaIntegration>();
      const integrationOf = (fn: FunctionName) => {
        let integration = integrations.get(fn);
        if (!integration) {
          integration = new HttpLambdaIntegration(`${pascal(api)}${pascal(fn)}`, this.functionFor(api, fn, environment, props));
          integrations.set(fn, integration);
        }
        return integration;
      };
      for (const route of DEPLOYED_ROUTES.filter((r) => r.api === api)) {
        httpApi.addRoutes({
          path: route.path,
          methods: [HttpMethod[route.method]],
          integration: integrationOf(route.fn),
          ...(route.scopes ? { authorizer, authorizationScopes: [...route.scopes] } : {}),
        });
      }
      // Known path, other method → 405; anything else → JSON 404 (fallbackRouteKeys says which keys).
      const unauthenticated: Construct[] = [httpApi];
      for (const key of fallbackRouteKeys(api, DEPLOYED_ROUTES)) {
        if (key === '$default') {
          unauthenticated.push(new HttpRoute(this, `${pascal(api)}DefaultRoute`, {
            httpApi,
            routeKey: HttpRouteKey.DEFAULT,
            integration: integrationOf(FALLBACK_FUNCTION),
          }));
        } else {
          const [method, path] = key.split(' ') as [keyof typeof HttpMethod, string];
          httpApi.addRoutes({ path, methods: [HttpMethod[method]], integration: integrationOf(FALLBACK_FUNCTION) });
        }
      }
      this.addStage(api, httpApi, props.throttle ?? { rateLimit: 200, burstLimit: 400 });
      for (const construct of unauthenticated) {
        Validations.of(construct).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: api === 'auth'
            ? 'The authorization server is public by nature: its endpoints authenticate clients and users themselves.'
            : 'Every resource route has the JWT authorizer; only the OpenAPI document and the 405/404 fallbacks, which read no data, are open.',
        });
      }
    }
  }

  private functionFor(api: ApiName, fn: FunctionName, environment: Record<string, string>, props: ServiceApisProps) {
    const id = `${pascal(api)}${pascal(fn)}Function`;
    let fnc = this.functions.get(id);
    if (fnc) return fnc;
    const def: FunctionDef = FUNCTIONS[fn];
    const needs = FUNCTION_NEEDS[fn];
    fnc = new ServiceFunction(this, id, { entry: def.entry, environment });
    const table = tableGrantOf(fn);
    if (table.actions.length > 0 || table.index) fnc.bindTable(props.table, table.actions, table.index);
    if (needs.signingKey === 'sign') props.signingKey.grantSign(fnc);
    if (needs.signingKey === 'verify') props.signingKey.grantVerify(fnc);
    if (needs.sendsMail) {
      // The sender may be verified in SES as an address or as its domain.
      const { region, account, partition } = Stack.of(this);
      const domain = props.mailFrom.split('@').pop();
      fnc.addToRolePolicy(new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [props.mailFrom, domain].map((identity) => `arn:${partition}:ses:${region}:${account}:identity/${identity}`),
      }));
    }
    this.functions.set(id, fnc);
    return fnc;
  }

  private addStage(api: ApiName, httpApi: HttpApi, throttle: { rateLimit: number; burstLimit: number }) {
    const accessLogs = new LogGroup(this, `${pascal(api)}AccessLogs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new HttpStage(this, `${pascal(api)}Stage`, {
      httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify({
          requestId: '$context.requestId',
          routeKey: '$context.routeKey',
          status: '$context.status',
          latencyMs: '$context.responseLatency',
          integrationLatencyMs: '$context.integrationLatency',
          authorizerError: '$context.authorizer.error',
          sourceIp: '$context.identity.sourceIp',
        })),
      },
    });
  }
}

function corsPreflight(cors: CorsSettings | undefined): CorsPreflightOptions | undefined {
  return cors && {
    allowOrigins: [...cors.allowOrigins],
    allowMethods: cors.allowMethods.map((m) => CorsHttpMethod[m]),
    allowHeaders: [...cors.allowHeaders],
    exposeHeaders: [...cors.exposeHeaders],
    maxAge: Duration.seconds(cors.maxAgeSeconds),
  };
}

function pascal(text: string): string {
  return text.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}
