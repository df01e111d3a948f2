import { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpStage, LogGroupLogDestination, type CfnStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { pascal } from '#infra/constructs/construct-ids';
import type { RouteTableApi } from '#infra/constructs/route-table-api';
import { DEPLOYED_ROUTES } from '#functions/registry';
import { DEFAULT_ROUTE_THROTTLE, THROTTLES, type ApiName } from '#shared/routes';

export interface ApiStageProps {
  /** The API, with its route table already added (`addRouteTable`). */
  httpApi: RouteTableApi;
}

/** One route key's throttle, as `AWS::ApiGatewayV2::Stage` RouteSettings take it. */
export interface RouteThrottleSettings {
  ThrottlingRateLimit: number;
  ThrottlingBurstLimit: number;
}

/** The stage route settings of an API: every deployed route key with its class's numbers (THROTTLES). */
export function routeThrottleSettings(api: ApiName): Record<string, RouteThrottleSettings> {
  return Object.fromEntries(DEPLOYED_ROUTES.filter((route) => route.api === api).map((route) => {
    const { rateLimit, burstLimit } = THROTTLES[route.throttle];
    return [`${route.method} ${route.path}`, { ThrottlingRateLimit: rateLimit, ThrottlingBurstLimit: burstLimit }];
  }));
}

/**
 * The API's `$default` stage, deployed on every change, with JSON access logs in a log group of its
 * own kept 30 days. Throttled per route key from the route table: each route of the table gets its
 * class's rate and burst (route settings); every other route (the 405/404 fallbacks) the stage's
 * default route throttle. API Gateway refuses route settings that name a route it does not know yet,
 * so the stage waits for the API's routes.
 */
export class ApiStage extends HttpStage {
  constructor(scope: Construct, id: string, props: ApiStageProps) {
    // Beside the stage, as ServiceFunction's log group is beside its function.
    const accessLogs = new LogGroup(scope, `${pascal(props.httpApi.api)}AccessLogs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      httpApi: props.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: DEFAULT_ROUTE_THROTTLE.rateLimit, burstLimit: DEFAULT_ROUTE_THROTTLE.burstLimit },
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
    (this.node.defaultChild as CfnStage).routeSettings = routeThrottleSettings(props.httpApi.api);
    this.node.addDependency(...props.httpApi.routes);
  }
}
