import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { endpointOf, FALLBACK_FUNCTION, ROUTES, type FunctionName } from '#functions/registry';
import { corsOf, fallbackRouteKeys, type ApiName, type CorsSettings } from '#shared/routes';
import type { createJwtAuthorizer } from '#local/jwt-authorizer';
import { runAsFunction } from '#local/invocation-context';
import { lambdaContext } from '#local/lambda-context';

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway's payload limit for HTTP APIs. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+(json|xml))/i;

interface CompiledRoute {
  routeKey: string;
  method: string;
  pattern: RegExp;
  names: string[];
  /** Per path segment, compared left to right: 0 literal, 1 variable, 2 greedy variable (lower is more specific). */
  rank: number[];
  fn: FunctionName;
  scopes?: readonly string[];
}

export interface GatewayOptions {
  api: ApiName;
  port: number;
  /** Present on the resource API: the JWT authorizer every scoped route goes through. */
  authorize?: ReturnType<typeof createJwtAuthorizer>;
}

/**
 * A local stand-in for one API Gateway HTTP API: selects the route like API Gateway (the most
 * specific full match, then a greedy path, then `$default`; none: 404 `{"message":"Not Found"}`),
 * answers CORS preflights that no route takes, runs the JWT authorizer, builds a payload 2.0 event,
 * runs the same handler code as Lambda, maps the result back and puts the API's CORS headers on it.
 * test/infra/gateway-parity.test.ts holds it to the synthesized template and AWS's documentation.
 */
export function startGateway(options: GatewayOptions): Promise<{ server: Server; url: string }> {
  const routes = compileRoutes(options.api);
  const corsSettings = corsOf(options.api, ROUTES);
  const handlers = new Map<FunctionName, Promise<LambdaHandler>>();
  const load = (fn: FunctionName) => {
    let handler = handlers.get(fn);
    if (!handler) {
      handler = import(resolve(endpointOf(fn).entry)).then((module: { handler: LambdaHandler }) => module.handler);
      handlers.set(fn, handler);
    }
    return handler;
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      console.error('local gateway failure', error);
      if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, JSON.stringify({ message: 'Internal Server Error' }));
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const requestId = randomUUID();
    const url = requestTarget(req.url ?? '/');
    const method = req.method ?? 'GET';
    // API Gateway adds CORS headers only to a request that names its Origin.
    const cors = corsSettings && req.headers.origin ? corsHeaders(corsSettings) : {};
    res.setHeader('apigw-requestid', requestId);

    const body = await readBody(req);
    if (body === undefined) {
      send(res, 413, { 'content-type': 'application/json', ...cors }, JSON.stringify({ message: 'Request Entity Too Large' }));
      return;
    }
    const matched = match(routes, method, url.pathname);
    if (!matched) {
      if (corsSettings && method === 'OPTIONS' && req.headers.origin && req.headers['access-control-request-method']) {
        send(res, 204, { ...cors, ...preflightHeaders(corsSettings) });
      } else {
        send(res, 404, { 'content-type': 'application/json', ...cors }, JSON.stringify({ message: 'Not Found' }));
      }
      return;
    }
    const { route, pathParameters } = matched;

    let authorizer: Record<string, unknown> | undefined;
    if (route.scopes && options.authorize) {
      const header = req.headers.authorization;
      const result = await options.authorize(header, route.scopes);
      if (!result.ok) {
        send(res, result.status, { 'content-type': 'application/json', ...result.headers, ...cors }, result.body);
        return;
      }
      authorizer = { jwt: { claims: result.claims, scopes: result.scopes } };
    }

    const event = toEvent(req, url, method, route, pathParameters, body, requestId, authorizer);
    const handler = await load(route.fn);
    const invocation = { fn: route.fn, api: options.api, routeKey: route.routeKey };
    const result = await runAsFunction(invocation, () => handler(event, lambdaContext(route.fn, requestId)));
    const headers: Record<string, string | string[]> = { ...result.headers as Record<string, string>, ...cors };
    // With CORS configured, API Gateway ignores the integration's own CORS headers.
    if (corsSettings) {
      for (const name of Object.keys(headers)) {
        if (name.toLowerCase().startsWith('access-control-') && !(name in cors)) delete headers[name];
      }
    }
    if (result.cookies?.length) headers['set-cookie'] = result.cookies;
    const payload = result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    send(res, result.statusCode ?? 200, headers, payload);
  }

  return new Promise((resolveStart, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolveStart({ server, url: `http://localhost:${port}` });
    });
  });
}

/**
 * The path and query of a request as API Gateway passes them on (rawPath, rawQueryString): the path
 * as sent, never resolved as a URL (which would read `//evil.example` as a host, and fail on `//`).
 */
function requestTarget(target: string): { pathname: string; search: string; searchParams: URLSearchParams } {
  let rest = target;
  if (!rest.startsWith('/')) {
    // The absolute form (`GET http://host/path`) that proxies send; its path and query as sent.
    const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
    rest = match ? rest.slice(match[0].length) : rest;
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  const pathname = q < 0 ? rest : rest.slice(0, q);
  const search = q < 0 ? '' : rest.slice(q);
  return { pathname, search, searchParams: new URLSearchParams(search) };
}

function compileRoutes(api: ApiName): CompiledRoute[] {
  const compile = (routeKey: string, fn: FunctionName, scopes?: readonly string[]): CompiledRoute => {
    if (routeKey === '$default') return { routeKey, method: 'ANY', pattern: /^/, names: [], rank: [], fn };
    const [method, path] = routeKey.split(' ') as [string, string];
    const names: string[] = [];
    const rank: number[] = [];
    const source = path.split('/').slice(1).map((segment) => {
      const variable = /^\{([^}+]+)(\+?)\}$/.exec(segment);
      if (!variable) {
        rank.push(0);
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      names.push(variable[1]!);
      rank.push(variable[2] ? 2 : 1);
      return variable[2] ? '(.+)' : '([^/]+)';
    });
    return { routeKey, method, pattern: new RegExp(`^/${source.join('/')}$`), names, rank, fn, scopes };
  };
  return [
    ...ROUTES.filter((r) => r.api === api).map((r) => compile(`${r.method} ${r.path}`, r.fn, r.scopes)),
    ...fallbackRouteKeys(api, ROUTES).map((key) => compile(key, FALLBACK_FUNCTION)),
  ];
}

/**
 * API Gateway's route selection ("Routing API requests", HTTP APIs): a full match of path and
 * method, then a greedy path variable, then `$default`; `ANY` takes the methods a path does not name.
 * Among several matches the more specific path wins (`/pets/dog/1` over `/pets/dog/{id}`).
 */
function match(routes: CompiledRoute[], method: string, path: string) {
  let best: { route: CompiledRoute; found: RegExpExecArray } | undefined;
  for (const route of routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const found = route.pattern.exec(path);
    if (found && (!best || moreSpecific(route, best.route))) best = { route, found };
  }
  if (!best) return undefined;
  const { route, found } = best;
  const pathParameters = Object.fromEntries(route.names.map((name, i) => [name, decodePathSegment(found[i + 1] ?? '')]));
  return { route, pathParameters };
}

function moreSpecific(a: CompiledRoute, b: CompiledRoute): boolean {
  const tier = (r: CompiledRoute) => (r.routeKey === '$default' ? 2 : r.rank.includes(2) ? 1 : 0);
  if (tier(a) !== tier(b)) return tier(a) < tier(b);
  for (let i = 0; i < Math.min(a.rank.length, b.rank.length); i++) {
    if (a.rank[i] !== b.rank[i]) return a.rank[i]! < b.rank[i]!;
  }
  if (a.rank.length !== b.rank.length) return a.rank.length > b.rank.length;
  return a.method !== 'ANY' && b.method === 'ANY';
}

// A malformed percent-encoding (`%ZZ`) is passed on as sent: the handler then answers for it
// (404 for a device id) instead of the gateway failing with a 500.
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toEvent(
  req: IncomingMessage, url: ReturnType<typeof requestTarget>, method: string, route: CompiledRoute, pathParameters: Record<string, string>,
  body: Buffer, requestId: string, authorizer: Record<string, unknown> | undefined,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') cookies.push(...String(value).split(';').map((c) => c.trim()).filter(Boolean));
    else headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: route.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(route.names.length ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: route.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      ...(authorizer ? { authorizer } : {}),
    },
    ...(body.length ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !isText,
  } as APIGatewayProxyEventV2;
}

function corsHeaders(cors: CorsSettings): Record<string, string> {
  return {
    'access-control-allow-origin': cors.allowOrigins.join(','),
    'access-control-expose-headers': cors.exposeHeaders.join(','),
  };
}

function preflightHeaders(cors: CorsSettings): Record<string, string> {
  return {
    'access-control-allow-methods': cors.allowMethods.join(','),
    'access-control-allow-headers': cors.allowHeaders.join(','),
    'access-control-max-age': String(cors.maxAgeSeconds),
  };
}

function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body?: string | Buffer) {
  res.writeHead(status, headers);
  res.end(body);
}
