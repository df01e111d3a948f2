import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { FALLBACK_FUNCTION, FUNCTIONS, pathsOf, RESOURCE_API_CORS, ROUTES, type ApiName, type FunctionName, type Route } from '#infra/routes';
import type { createJwtAuthorizer } from '#infra/local/jwt-authorizer';
import { runAsFunction } from '#infra/local/invocation-context';
import { lambdaContext } from '#infra/local/lambda-context';

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway's payload limit for HTTP APIs. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+(json|xml))/i;

interface CompiledRoute {
  routeKey: string;
  method: string;
  pattern: RegExp;
  names: string[];
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
 * A local stand-in for one API Gateway HTTP API: matches the route table like API Gateway
 * (method routes, then `ANY` routes for known paths, then `$default`), runs the JWT authorizer,
 * builds a payload 2.0 event, runs the same handler code as Lambda, and maps the result back.
 */
export function startGateway(options: GatewayOptions): Promise<{ server: Server; url: string }> {
  const routes = compileRoutes(options.api);
  const handlers = new Map<FunctionName, Promise<LambdaHandler>>();
  const load = (fn: FunctionName) => {
    let handler = handlers.get(fn);
    if (!handler) {
      handler = import(resolve(FUNCTIONS[fn].entry)).then((module: { handler: LambdaHandler }) => module.handler);
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
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const cors = options.api === 'resource' && req.headers.origin ? corsHeaders() : {};
    res.setHeader('apigw-requestid', requestId);

    if (options.api === 'resource' && method === 'OPTIONS' && req.headers.origin && req.headers['access-control-request-method']) {
      send(res, 204, { ...cors, ...preflightHeaders() });
      return;
    }
    const body = await readBody(req);
    if (body === undefined) {
      send(res, 413, { 'content-type': 'application/json', ...cors }, JSON.stringify({ message: 'Request Entity Too Large' }));
      return;
    }
    const { route, pathParameters } = match(routes, method, url.pathname);

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

function compileRoutes(api: ApiName): CompiledRoute[] {
  const compile = (method: string, path: string, fn: FunctionName, scopes?: readonly string[]): CompiledRoute => {
    const names: string[] = [];
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    return { routeKey: `${method} ${path}`, method, pattern: new RegExp(`^${source}$`), names, fn, scopes };
  };
  return [
    ...ROUTES.filter((r: Route) => r.api === api).map((r) => compile(r.method, r.path, r.fn, r.scopes)),
    ...[...pathsOf(api).keys()].map((path) => compile('ANY', path, FALLBACK_FUNCTION)),
  ];
}

function match(routes: CompiledRoute[], method: string, path: string) {
  for (const wanted of [method, 'ANY']) {
    for (const route of routes) {
      if (route.method !== wanted) continue;
      const found = route.pattern.exec(path);
      if (found) {
        const pathParameters = Object.fromEntries(route.names.map((name, i) => [name, decodePathSegment(found[i + 1] ?? '')]));
        return { route, pathParameters };
      }
    }
  }
  const fallback: CompiledRoute = { routeKey: '$default', method: 'ANY', pattern: /^/, names: [], fn: FALLBACK_FUNCTION };
  return { route: fallback, pathParameters: {} };
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
  req: IncomingMessage, url: URL, method: string, route: CompiledRoute, pathParameters: Record<string, string>,
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

function corsHeaders(): Record<string, string> {
  return {
    'access-control-allow-origin': RESOURCE_API_CORS.allowOrigins.join(','),
    'access-control-expose-headers': RESOURCE_API_CORS.exposeHeaders.join(','),
  };
}

function preflightHeaders(): Record<string, string> {
  return {
    'access-control-allow-methods': RESOURCE_API_CORS.allowMethods.join(','),
    'access-control-allow-headers': RESOURCE_API_CORS.allowHeaders.join(','),
    'access-control-max-age': String(RESOURCE_API_CORS.maxAgeSeconds),
  };
}

function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body?: string | Buffer) {
  res.writeHead(status, headers);
  res.end(body);
}
