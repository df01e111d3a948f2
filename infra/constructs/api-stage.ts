import { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { pascal } from '#infra/constructs/construct-ids';
import type { RouteTableApi } from '#infra/constructs/route-table-api';

export interface ApiStageProps {
  httpApi: RouteTableApi;
  /** Requests per second the API accepts before API Gateway answers 429. */
  throttle?: { rateLimit: number; burstLimit: number };
}

/**
 * The API's `$default` stage, deployed on every change: throttled (200 requests/s, burst 400,
 * unless told otherwise), with JSON access logs in a log group of its own kept 30 days.
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
      throttle: props.throttle ?? { rateLimit: 200, burstLimit: 400 },
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
