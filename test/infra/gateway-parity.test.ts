import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { DeviceUserServiceStack } from '#infra/stack';
import { removeTestApps, testApp } from '../support/cdk-app';
import { tokenFor, useTestService } from '../support/service';
import { deployedTemplate } from '../support/deployed-form';

// What API Gateway does with the SYNTHESIZED TEMPLATE, as AWS documents it, against what the local
// gateway does. The expectations are read from the template (route keys, authorizers, integrations,
// CORS configuration), never from the route table (functions/registry.ts), so that this test can disagree with the code.
// Which function answered a local request: the Lambda context the gateway builds names it, and its
// request id is the response's `apigw-requestid`.
const invoked = vi.hoisted(() => new Map<string, string>());
vi.mock('#local/lambda-context', async (importOriginal) => {
  const original = await importOriginal<typeof import('#local/lambda-context')>();
  return {
    lambdaContext: (functionName: string, requestId: string) => {
      invoked.set(requestId, functionName);
      return original.lambdaContext(functionName, requestId);
    },
  };
});

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

interface TemplateRoute {
  key: string;
  method: string;
  path: string;
  /** The function the route's integration invokes, named as in the route table (from its logical id). */
  fn: string;
  jwt?: { scopes: string[]; issuer: string; audience: string[] };
}

interface TemplateCors {
  AllowOrigins?: string[];
  AllowMethods?: string[];
  AllowHeaders?: string[];
  ExposeHeaders?: string[];
  MaxAge?: number;
  AllowCredentials?: boolean;
}

interface TemplateApi {
  name: string;
  /** Where the local service serves this API (the stack output naming it: ApiUrl or AuthUrl). */
  url: string;
  cors?: TemplateCors;
  routes: TemplateRoute[];
}

const FALLBACK = 'http-fallback';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const ORIGIN = 'https://app.example.org';
const ALICE = DEMO_USERS[0].user;

/** Reads both APIs out of the template, each mapped to the local URL of the same stack output. */
function readTemplate(resources: Resources, outputs: Record<string, { Value: unknown }>, urls: Record<string, string>): TemplateApi[] {
  const getAttOf = (value: unknown) => (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const refOf = (value: unknown) => (value as { Ref: string }).Ref;
  const urlOfApi = (apiId: string) => {
    const output = Object.entries(outputs).find(([, o]) => JSON.stringify(o.Value) === JSON.stringify({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }));
    if (!output || !urls[output[0]]) throw new Error(`no local URL for the API ${apiId}`);
    return urls[output[0]]!;
  };
  // ApisResourceApi79FA0BD1 → functions Resource<Name>Function<hash> (in the resource API's nested stack of functions),
  // e.g. ResourceGetUserFunction… → get-user.
  const functionName = (apiId: string, functionId: string) => {
    const prefix = apiId.replace(/^Apis/, '').replace(/Api[0-9A-F]{8}$/, '');
    const pascal = new RegExp(`^${prefix}(\\w+?)Function[0-9A-F]{8}$`).exec(functionId)?.[1];
    if (!pascal) throw new Error(`cannot name the function ${functionId}`);
    return pascal.replace(/[A-Z]/g, (c, i: number) => `${i ? '-' : ''}${c.toLowerCase()}`);
  };
  return Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Api').map(([apiId, api]) => ({
    name: api.Properties.Name as string,
    url: urlOfApi(apiId),
    cors: api.Properties.CorsConfiguration as TemplateCors | undefined,
    routes: Object.values(resources)
      .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && refOf(r.Properties.ApiId) === apiId)
      .map(({ Properties: route }) => {
        const integrationId = refOf((route.Target['Fn::Join'][1] as unknown[])[1]);
        const functionId = getAttOf(resources[integrationId]!.Properties.IntegrationUri);
        const [method, path] = route.RouteKey === '$default' ? ['ANY', ''] : (route.RouteKey as string).split(' ') as [string, string];
        let jwt: TemplateRoute['jwt'];
        if (route.AuthorizationType === 'JWT') {
          const { JwtConfiguration: config } = resources[refOf(route.AuthorizerId)]!.Properties;
          jwt = {
            scopes: route.AuthorizationScopes ?? [],
            issuer: urlOfApi(getAttOf(config.Issuer)),
            audience: (config.Audience as unknown[]).map((a) => urlOfApi(getAttOf(a))),
          };
        }
        return { key: route.RouteKey as string, method, path, fn: functionName(apiId, functionId), jwt };
      }),
  }));
}

const segmentsOf = (path: string) => path.split('/').slice(1);
const isGreedy = (segment: string) => /^\{[^}]+\+\}$/.test(segment);
const isVariable = (segment: string) => /^\{[^}]+\}$/.test(segment);

function pathMatches(template: string, path: string): boolean {
  const want = segmentsOf(template);
  const got = segmentsOf(path);
  for (let i = 0; i < want.length; i++) {
    if (isGreedy(want[i]!)) return got.length > i && got.slice(i).every(Boolean);
    if (got[i] === undefined || (isVariable(want[i]!) ? got[i] === '' : got[i] !== want[i])) return false;
  }
  return got.length === want.length;
}

/**
 * The route API Gateway selects ("Routing API requests" in "Create routes for HTTP APIs",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html):
 * "API Gateway selects the route with the most-specific match, using the following priorities:
 * 1. Full match for a route and method. 2. Match for a route and method with a greedy path variable
 * ({proxy+}). 3. The $default route. If no routes match a request, API Gateway returns
 * {"message":"Not Found"} to the client." — "you can use the ANY method to match all methods that
 * you haven't defined for a resource", and a static path beats a path variable (`GET /pets/dog/1`
 * over `GET /pets/dog/{id}` in the page's example).
 */
function selectRoute(api: TemplateApi, method: string, path: string): TemplateRoute | undefined {
  const candidates = api.routes.filter((r) => r.key !== '$default' && (r.method === method || r.method === 'ANY') && pathMatches(r.path, path));
  const specificity = (r: TemplateRoute) => segmentsOf(r.path).map((s) => (isGreedy(s) ? 2 : isVariable(s) ? 1 : 0));
  const bySpecificity = (a: TemplateRoute, b: TemplateRoute) => {
    const [x, y] = [specificity(a), specificity(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return y.length - x.length || Number(a.method === 'ANY') - Number(b.method === 'ANY');
  };
  const greedy = (r: TemplateRoute) => segmentsOf(r.path).some(isGreedy);
  return candidates.filter((r) => !greedy(r)).sort(bySpecificity)[0]
    ?? candidates.filter(greedy).sort(bySpecificity)[0]
    ?? api.routes.find((r) => r.key === '$default');
}

interface Request {
  method: string;
  path: string;
  /** The scopes of a valid access token sent as a bearer token; none: no Authorization header. */
  scopes?: string[];
  origin?: boolean;
  preflight?: boolean;
}

interface Answer {
  status?: number;
  json?: unknown;
  /** The function that runs; none when API Gateway answers by itself. */
  fn?: string;
  allow?: string[];
  preflight?: boolean;
}

/** What API Gateway answers, from the template and AWS's documentation. */
function awsAnswer(api: TemplateApi, request: Request): Answer {
  const route = selectRoute(api, request.method, request.path);
  if (!route) {
    // "If you configure CORS for an API, API Gateway automatically sends a response to preflight
    // OPTIONS requests, even if there isn't an OPTIONS route configured for your API." — but a route
    // that matches the preflight takes it: "The $default route catches requests for all methods and
    // routes that you haven't explicitly defined, including OPTIONS requests" ("Configure CORS for
    // HTTP APIs", https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-cors.html;
    // an `ANY` route does the same, aws/serverless-application-model#1603, anomalyco/sst#5493).
    // Which of the two comes first does not matter here: the CORS test checks that no route of the
    // template takes OPTIONS.
    if (api.cors && request.method === 'OPTIONS' && request.origin && request.preflight) return { status: 204, preflight: true };
    return { status: 404, json: { message: 'Not Found' } };
  }
  if (route.jwt) {
    // "Control access to HTTP APIs with JWT authorizers": the token "must include at least one of the
    // scopes in the route's authorizationScopes. If any of these steps fail, API Gateway denies the API
    // request" (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-jwt-authorizer.html):
    // 401 {"message":"Unauthorized"} with a www-authenticate header for a missing or invalid token
    // (".../http-api-troubleshooting-jwt.html"), 403 Forbidden for a valid token that carries none of
    // the route's scopes (".../rest-api-jwt-authorizer-methods.html").
    if (!request.scopes) return { status: 401, json: { message: 'Unauthorized' } };
    if (route.jwt.scopes.length > 0 && !route.jwt.scopes.some((s) => request.scopes!.includes(s))) {
      return { status: 403, json: { message: 'Forbidden' } };
    }
  }
  if (route.fn !== FALLBACK) return { fn: route.fn };
  // The fallback reads the path of its route key: one that other routes serve is a 405 naming their
  // methods. Reached by `$default` (the auth API's only fallback), it finds that path itself, as the
  // routes of the other methods would have been selected: the most specific served path matching the request.
  const path = route.key === '$default'
    ? selectRoute({ ...api, routes: api.routes.filter((r) => r.fn !== FALLBACK).map((r) => ({ ...r, method: 'ANY' })) }, request.method, request.path)?.path
    : route.path;
  const served = api.routes.filter((r) => r.path === path && r.fn !== FALLBACK).map((r) => r.method);
  if (served.length > 0) return { fn: FALLBACK, status: 405, allow: served };
  return { fn: FALLBACK, status: 404 };
}

describe('local gateway against the synthesized API Gateway template', () => {
  const service = useTestService();
  let apis: TemplateApi[];
  let resourceApi: TemplateApi;
  let authApi: TemplateApi;
  const tokens = new Map<string, Promise<string>>();

  beforeAll(async () => {
    const template = deployedTemplate(new DeviceUserServiceStack(testApp({ mailFrom: 'no-reply@example.com' }), 'Parity'));
    apis = readTemplate(template.Resources as Resources, template.Outputs, { ApiUrl: service.apiUrl, AuthUrl: service.authUrl });
    resourceApi = apis.find((a) => a.url === service.apiUrl)!;
    authApi = apis.find((a) => a.url === service.authUrl)!;
  });
  afterAll(() => {
    removeTestApps();
  });

  function tokenWith(scopes: string[], overrides: { issuer?: string; audience?: string } = {}) {
    const key = JSON.stringify([scopes, overrides]);
    if (!tokens.has(key)) tokens.set(key, tokenFor(service, ALICE.id, scopes, overrides));
    return tokens.get(key)!;
  }

  async function send(api: TemplateApi, request: Request, token?: string) {
    const headers: Record<string, string> = {};
    const bearer = token ?? (request.scopes ? await tokenWith(request.scopes) : undefined);
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (request.origin) headers.origin = ORIGIN;
    if (request.preflight) {
      headers['access-control-request-method'] = 'PUT';
      headers['access-control-request-headers'] = 'authorization, content-type';
    }
    const response = await fetch(`${api.url}${request.path}`, { method: request.method, headers, redirect: 'manual' });
    const text = await response.text();
    const requestId = response.headers.get('apigw-requestid');
    return { status: response.status, headers: response.headers, text, fn: requestId ? invoked.get(requestId) : undefined };
  }

  type Reply = Awaited<ReturnType<typeof send>>;

  const list = (value: string | null) => (value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean).sort();
  const corsHeaderNames = (reply: Reply) => [...reply.headers.keys()].filter((name) => name.startsWith('access-control-')).sort();
  const concrete = (path: string) => path.replace(/\{([^}+]+)\+?\}/g, (_, name: string) => `sample-${name.replace(/_/g, '-')}`);
  const servedPaths = (api: TemplateApi) => [...new Set(api.routes.filter((r) => r.path && !r.path.includes('+}')).map((r) => r.path))];
  const allScopes = (api: TemplateApi) => [...new Set(api.routes.flatMap((r) => r.jwt?.scopes ?? []))];

  /** Asserts the local reply is the answer API Gateway gives; returns a label for failures. */
  function expectSame(api: TemplateApi, request: Request, reply: Reply) {
    const label = `${api.name}: ${request.method} ${request.path}`;
    const answer = awsAnswer(api, request);
    expect(reply.fn, `${label}: the function that ran`).toBe(answer.fn);
    if (answer.status !== undefined) expect(reply.status, label).toBe(answer.status);
    if (answer.json !== undefined) expect(JSON.parse(reply.text), label).toEqual(answer.json);
    if (answer.status === 401) expect(reply.headers.get('www-authenticate'), label).toMatch(/^Bearer /);
    if (answer.allow) expect(list(reply.headers.get('allow')), label).toEqual(list(answer.allow.join(',')));
    if (answer.fn === FALLBACK && answer.status === 404 && request.method !== 'HEAD') {
      expect(JSON.parse(reply.text), label).toMatchObject({ error: 'not_found' });
    }
    return answer;
  }

  it('reads two APIs, with routes, from the template', () => {
    expect(apis).toHaveLength(2);
    expect(resourceApi.routes.some((r) => r.jwt)).toBe(true);
    expect(authApi.routes.length).toBeGreaterThan(20);
  });

  describe('routes', () => {
    it.each(['resource', 'auth'])('sends every route key of the %s API to the function its integration invokes', async (which) => {
      const api = which === 'resource' ? resourceApi : authApi;
      const routes = api.routes.filter((r) => r.path && r.method !== 'ANY' && !r.path.includes('+}'));
      expect(routes.length).toBeGreaterThan(0);
      for (const route of routes) {
        const reply = await send(api, { method: route.method, path: concrete(route.path), scopes: route.jwt?.scopes });
        expect(reply.fn, route.key).toBe(route.fn);
      }
    });

    it.each(['resource', 'auth'])('answers every method on every path of the %s API as API Gateway selects its route', async (which) => {
      const api = which === 'resource' ? resourceApi : authApi;
      const scopes = allScopes(api);
      for (const path of servedPaths(api).map(concrete)) {
        for (const method of METHODS) {
          const request = { method, path, scopes };
          expectSame(api, request, await send(api, request));
        }
      }
    });

    it.each(['resource', 'auth'])('answers unknown paths of the %s API as API Gateway selects their route (404)', async (which) => {
      const api = which === 'resource' ? resourceApi : authApi;
      // API Gateway's rawPath is the path as sent: `//evil.example` is a path (with an empty first
      // segment), not a host. On the auth API (no greedy route) such paths reach `$default`.
      const rawPaths = which === 'auth'
        ? ['//evil.example', '//', '//evil.example:x/a', '//login', '///account', ...servedPaths(api).map((p) => `/${concrete(p)}`)]
        : [];
      const paths = ['/no-such-path', '/api/no-such-path', ...rawPaths, ...servedPaths(api).filter((p) => p !== '/').map((p) => `${concrete(p)}/extra`)];
      let notFound = 0;
      for (const path of paths) {
        for (const method of ['GET', 'POST', 'DELETE']) {
          const request = { method, path, scopes: allScopes(api) };
          const reply = await send(api, request);
          if (expectSame(api, request, reply).status === 404) notFound++;
        }
      }
      expect(notFound).toBeGreaterThan(0);
    });
  });

  describe('JWT authorizer', () => {
    const scopedRoutes = () => resourceApi.routes.filter((r) => r.jwt);

    it('guards every scoped route: 401 without a token, 403 without one of its scopes, the function with one', async () => {
      expect(scopedRoutes().length).toBeGreaterThan(0);
      for (const route of scopedRoutes()) {
        const path = concrete(route.path);
        const others = allScopes(resourceApi).filter((s) => !route.jwt!.scopes.includes(s));
        for (const request of [
          { method: route.method, path },
          { method: route.method, path, scopes: others.length > 0 ? others : ['unrelated'] },
          ...route.jwt!.scopes.map((scope) => ({ method: route.method, path, scopes: [scope] })),
        ]) {
          expectSame(resourceApi, request, await send(resourceApi, request));
        }
      }
    });

    it('trusts the issuer and the audience the template configures, and no other', async () => {
      const [route] = scopedRoutes();
      const { issuer, audience, scopes } = route!.jwt!;
      const request = { method: route!.method, path: concrete(route!.path) };
      const call = async (overrides: { issuer?: string; audience?: string }) =>
        send(resourceApi, request, await tokenWith(scopes, overrides));

      expect((await call({ issuer, audience: audience[0] })).fn).toBe(route!.fn);
      const otherUrl = apis.map((a) => a.url).find((url) => url !== issuer)!;
      for (const wrong of [{ issuer: otherUrl, audience: audience[0] }, { issuer, audience: issuer }]) {
        const reply = await call(wrong);
        expect(reply.status, JSON.stringify(wrong)).toBe(401);
        expect(JSON.parse(reply.text)).toEqual({ message: 'Unauthorized' });
        expect(reply.fn).toBeUndefined();
      }
    });
  });

  describe('CORS', () => {
    it('configures CORS on the resource API and leaves OPTIONS to it: no route of the API takes a preflight', () => {
      expect(resourceApi.cors).toBeDefined();
      for (const path of [...servedPaths(resourceApi), '/no-such-path', '/api/no-such-path/deeper'].map(concrete)) {
        expect(selectRoute(resourceApi, 'OPTIONS', path)?.key, path).toBeUndefined();
      }
    });

    it('answers a preflight on every resource path as API Gateway does: 204 with the configured headers, no function', async () => {
      const cors = resourceApi.cors!;
      // "To return CORS headers, your request must contain an origin header. For the OPTIONS method,
      // your request must contain an origin header and an Access-Control-Request-Method header."
      for (const path of [...servedPaths(resourceApi).map(concrete), '/no-such-path']) {
        const request = { method: 'OPTIONS', path, origin: true, preflight: true };
        const reply = await send(resourceApi, request);
        expect(expectSame(resourceApi, request, reply).preflight, path).toBe(true);
        expect(reply.headers.get('access-control-allow-origin'), path).toBe(cors.AllowOrigins!.includes('*') ? '*' : ORIGIN);
        expect(list(reply.headers.get('access-control-allow-methods')), path).toEqual(list(cors.AllowMethods!.join(',')));
        expect(list(reply.headers.get('access-control-allow-headers')), path).toEqual(list(cors.AllowHeaders!.join(',')));
        expect(reply.headers.get('access-control-max-age'), path).toBe(String(cors.MaxAge));
        expect(reply.headers.get('access-control-allow-credentials'), path).toBe(cors.AllowCredentials ? 'true' : null);
      }
    });

    it('puts the configured CORS headers on every answer to a request with Origin, errors included, and only then', async () => {
      const cors = resourceApi.cors!;
      // A route without a path variable: its function answers 200 to any token with its scope (a made-up device id would be a 404).
      const scoped = resourceApi.routes.find((r) => r.jwt && r.method === 'GET' && !r.path.includes('{'))!;
      const requests: Request[] = [
        { method: 'GET', path: concrete(scoped.path), scopes: scoped.jwt!.scopes }, // the function's answer
        { method: 'GET', path: concrete(scoped.path) }, // 401 from the authorizer
        { method: 'GET', path: concrete(scoped.path), scopes: ['unrelated'] }, // 403 from the authorizer
        { method: 'POST', path: concrete(scoped.path), scopes: allScopes(resourceApi) }, // 405 from the fallback
        { method: 'GET', path: '/no-such-path' }, // 404 from the fallback
      ];
      const statuses = new Set<number>();
      for (const request of requests) {
        const label = `${request.method} ${request.path} ${request.scopes?.join(' ') ?? 'no token'}`;
        const withOrigin = await send(resourceApi, { ...request, origin: true });
        statuses.add(expectSame(resourceApi, request, withOrigin).status ?? withOrigin.status);
        expect(withOrigin.headers.get('access-control-allow-origin'), label).toBe(cors.AllowOrigins!.includes('*') ? '*' : ORIGIN);
        expect(list(withOrigin.headers.get('access-control-expose-headers')), label).toEqual(list((cors.ExposeHeaders ?? []).join(',')));
        // "If you configure CORS for an API, API Gateway ignores CORS headers returned from your backend integration."
        expect(corsHeaderNames(withOrigin), label).toEqual(
          ['access-control-allow-origin', ...(cors.ExposeHeaders ? ['access-control-expose-headers'] : []),
            ...(cors.AllowCredentials ? ['access-control-allow-credentials'] : [])].sort(),
        );
        expect(corsHeaderNames(await send(resourceApi, request)), `${label} without Origin`).toEqual([]);
      }
      expect([...statuses].sort()).toEqual([200, 401, 403, 404, 405]);
    });

    it('configures no CORS on the auth API: a preflight reaches the routes (405 on a known path, or an OPTIONS route\'s function), and no answer carries CORS headers but that function\'s own', async () => {
      expect(authApi.cors).toBeUndefined();
      // Without a CORS configuration API Gateway answers no preflight and adds or removes no CORS
      // header ("If you configure CORS for an API, API Gateway ignores CORS headers returned from your
      // backend integration": only then): an `OPTIONS` route takes the preflight like any request, and
      // its function's headers are the answer's (the token and revocation endpoints' preflights,
      // which depend on the client and so cannot be a static API setting).
      const optionsRoutes = authApi.routes.filter((r) => r.method === 'OPTIONS');
      expect(optionsRoutes.length).toBeGreaterThan(0);
      let methodNotAllowed = 0;
      let byFunction = 0;
      for (const path of [...servedPaths(authApi).map(concrete), '/no-such-path']) {
        for (const request of [
          { method: 'OPTIONS', path, origin: true, preflight: true },
          { method: 'GET', path, origin: true },
        ]) {
          const reply = await send(authApi, request);
          const answer = expectSame(authApi, request, reply);
          if (answer.status === 405) methodNotAllowed++;
          const route = selectRoute(authApi, request.method, path);
          if (route?.method === 'OPTIONS') {
            byFunction++;
            expect(reply.fn, path).toBe(route.fn);
            expect(reply.status, path).toBe(204);
            expect(reply.headers.get('access-control-allow-origin'), path).toBe('*');
            expect(reply.headers.get('access-control-allow-credentials'), path).toBeNull();
          } else {
            expect(corsHeaderNames(reply), `${request.method} ${path}`).toEqual([]);
          }
        }
      }
      expect(methodNotAllowed).toBeGreaterThan(0);
      expect(byFunction).toBe(optionsRoutes.length);
    });
  });
});
