import { Duration, Names, Stack, Validations } from 'aws-cdk-lib';
import {
  CfnIntegration, CorsHttpMethod, HttpApi, HttpIntegration, HttpMethod, HttpRoute, HttpRouteKey, type CorsPreflightOptions,
  type HttpRouteIntegrationBindOptions, type IHttpRouteAuthorizer,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, type HttpLambdaIntegrationProps } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { pascal } from '#infra/constructs/construct-ids';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { DEPLOYED_ROUTES, FALLBACK_FUNCTION, type FunctionName } from '#functions/registry';
import { corsOf, fallbackRouteKeys, type ApiName, type CorsSettings } from '#shared/routes';

/**
 * The logical id of each API's fallback integration, as first deployed. CDK names an integration
 * after the first route that uses it, and which fallback route comes first follows the order in
 * which the declarations are found (functions/registry.ts): pinned, so that adding an endpoint
 * never replaces the integration behind every 405/404 route.
 */
const FALLBACK_INTEGRATION_IDS: Readonly<Partial<Record<ApiName, string>>> = {
  resource: 'ApisResourceApiPOSTuserResourceHttpFallbackB200FF98',
  // The auth API's fallback is its `$default` route alone, with an integration of its own.
};

export interface RouteTableApiProps {
  /** Which API of the route table this is. */
  api: ApiName;
  /** The API's name in API Gateway; its construct id when not given. */
  apiName?: string;
  description: string;
  /** Why its routes without an authorizer may be open (cdk-nag AwsSolutions-APIG4). */
  openRoutesReason: string;
}

/**
 * One HTTP API of the route table (functions/registry.ts), with that API's CORS (corsOf). Its routes
 * are added by `addRouteTable`, once the functions exist (they need the APIs' URLs).
 */
export class RouteTableApi extends HttpApi {
  readonly api: ApiName;
  /** Every route `addRouteTable` made, fallbacks included (the stage's route settings need them first). */
  readonly routes: HttpRoute[] = [];
  private readonly openRoutesReason: string;

  constructor(scope: Construct, id: string, props: RouteTableApiProps) {
    super(scope, id, {
      createDefaultStage: false,
      ...(props.apiName ? { apiName: props.apiName } : {}),
      description: props.description,
      corsPreflight: corsPreflight(corsOf(props.api, DEPLOYED_ROUTES)),
    });
    this.api = props.api;
    this.openRoutesReason = props.openRoutesReason;
  }

  /**
   * Every deployed route of this API, each integrated with its function; a route that names scopes
   * gets the authorizer. Then the fallbacks: a known path with another method → 405, anything else →
   * JSON 404 (fallbackRouteKeys says which route keys).
   */
  addRouteTable(functions: ServiceFunctions, authorizer: IHttpRouteAuthorizer) {
    const { api } = this;
    const integrations = new Map<FunctionName, HttpLambdaIntegration>();
    const integrationOf = (fn: FunctionName) => {
      let integration = integrations.get(fn);
      if (!integration) {
        // The 405/404 fallback reads nothing and is reached by dozens of routes: one invoke permission
        // for its whole API instead of one per route keeps the stack far below CloudFormation's
        // 500 resources. Every other function may be invoked only through its own routes.
        integration = new FunctionStackIntegration(`${pascal(api)}${pascal(fn)}`, functions.functionFor(api, fn),
          fn === FALLBACK_FUNCTION ? { scopePermissionToRoute: false } : {});
        integrations.set(fn, integration);
      }
      return integration;
    };
    for (const route of DEPLOYED_ROUTES.filter((r) => r.api === api)) {
      this.routes.push(...this.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: integrationOf(route.fn),
        ...(route.scopes ? { authorizer, authorizationScopes: [...route.scopes] } : {}),
      }));
    }
    const unauthenticated: Construct[] = [this];
    for (const key of fallbackRouteKeys(api, DEPLOYED_ROUTES)) {
      if (key === '$default') {
        // Beside the API rather than in it, where it was before the constructs were split: its
        // logical id, and so the deployed route, stay the same.
        // An integration of its own, whose permission names the `$default` route: the API-wide
        // permission of the other fallback routes (`<api>/*/*/*`) needs a method and a path.
        const route = new HttpRoute(this.node.scope!, `${pascal(api)}DefaultRoute`, {
          httpApi: this,
          routeKey: HttpRouteKey.DEFAULT,
          integration: new FunctionStackIntegration(`${pascal(api)}DefaultRouteFallback`, functions.functionFor(api, FALLBACK_FUNCTION)),
        });
        this.routes.push(route);
        unauthenticated.push(route);
      } else {
        const [method, path] = key.split(' ') as [keyof typeof HttpMethod, string];
        this.routes.push(...this.addRoutes({ path, methods: [HttpMethod[method]], integration: integrationOf(FALLBACK_FUNCTION) }));
      }
    }
    const fallbackIntegration = this.node.findAll()
      .find((c): c is HttpIntegration => c instanceof HttpIntegration && c.node.id === `${pascal(api)}${pascal(FALLBACK_FUNCTION)}`);
    const fallbackId = FALLBACK_INTEGRATION_IDS[api];
    if (fallbackId) (fallbackIntegration?.node.defaultChild as CfnIntegration | undefined)?.overrideLogicalId(fallbackId);
    for (const construct of unauthenticated) {
      Validations.of(construct).acknowledge({ id: 'AwsSolutions-APIG4', reason: this.openRoutesReason });
    }
  }
}

/**
 * A Lambda proxy integration whose invoke permissions are created beside the function (in its
 * area's nested stack) rather than beside the route, as HttpLambdaIntegration does: the routes and
 * integrations stay in the API's stack, and each function's permissions count in its own stack.
 * The same permissions: one per route (`<api>/*\/*<path>`), or one for the whole API
 * (`<api>/*\/*\/*`) with `scopePermissionToRoute: false`.
 */
class FunctionStackIntegration extends HttpLambdaIntegration {
  private readonly fn: IFunction;
  private readonly perRoute: boolean;

  constructor(id: string, handler: IFunction, props: HttpLambdaIntegrationProps = {}) {
    super(id, handler, props);
    this.fn = handler;
    this.perRoute = props.scopePermissionToRoute ?? true;
  }

  protected override completeBind({ route }: HttpRouteIntegrationBindOptions): void {
    const id = this.perRoute ? `Invoke${Names.nodeUniqueId(route.node)}` : `Invoke${Names.nodeUniqueId(route.httpApi.node)}`;
    if (this.fn.node.tryFindChild(id)) return;
    this.fn.addPermission(id, {
      scope: this.fn,
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(this.fn).formatArn({
        service: 'execute-api',
        resource: route.httpApi.apiId,
        resourceName: this.perRoute ? `*/*${route.path ?? ''}` : '*/*/*',
      }),
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
