import type { Scope } from '#shared/domain/scopes';

// The route table's vocabulary and the pure rules derived from it: throttles, CORS, the 405/404
// fallback route keys. The table itself is not here: each function declares its routes beside its
// handler (`functions/<area>/<name>.route.ts`, shared/declaration.ts), and functions/registry.ts
// collects them. Whatever needs the table takes the routes as a parameter.

export type ApiName = 'resource' | 'auth';
/**
 * The methods a declaration's route can name. `OPTIONS` only on an API without CORS configured (the
 * auth API), where API Gateway sends a preflight to the route like any request (functions/registry.ts
 * refuses it elsewhere: on an API with CORS, API Gateway must answer preflights itself).
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS';

/**
 * A function's name: the base name of its handler file and of its declaration
 * (`functions/devices/update-device.ts` → `update-device`). Any string: the names are discovered on
 * disk, so a lookup of an unknown name throws (functions/registry.ts endpointOf).
 */
export type FunctionName = string;

export interface Route {
  api: ApiName;
  method: HttpMethod;
  path: string;
  fn: FunctionName;
  /** Present: the route needs a valid access token holding one of these scopes (JWT authorizer). */
  scopes?: readonly Scope[];
  /** Its API Gateway throttle (THROTTLES): rate and burst of this route key on the deployed stage. */
  throttle: ThrottleClass;
}

/** A route's throttle class: routes of a class share their numbers (each route key has its own bucket). */
export type ThrottleClass = 'resource-read' | 'device-write' | 'token' | 'login' | 'mail' | 'page' | 'metadata';

export interface Throttle {
  /** Steady requests per second of one route key before API Gateway answers 429. */
  rateLimit: number;
  /** Requests the route key may take at once above the steady rate (the token bucket's size). */
  burstLimit: number;
  /** Where the numbers come from. */
  reason: string;
}

/**
 * The number of monthly active users the throttles are planned for, under the usage model of
 * docs/operations.md (bench/cost-model.ts): a poll of `GET /devices` every 60 s while the app is open
 * 2 hours a day, 4 app opens, 4 refreshes and 4 device writes a day, a web sign-in a month, the
 * busiest hour at 3× the day's average. `test/unit/cost-model.test.ts` checks that every class
 * carries that load; docs/operations.md says which one to raise first as users grow.
 */
export const PLANNED_MONTHLY_ACTIVE_USERS = 250_000;

/**
 * API Gateway throttles per route class: each deployed route key gets its class's numbers as stage
 * route settings (ApiStage). They are per route key, not per class or per client: `GET /devices` and
 * `GET /api/devices` have a bucket each. All of them together stay under the account's own limit of
 * 10,000 requests/s per region (shared by every API of the account), which remains the ceiling.
 */
export const THROTTLES = {
  'resource-read': {
    rateLimit: 1500, burstLimit: 3000,
    reason: 'GET /devices, the busiest route, peaks at ~1,040 requests/s at the planned 250,000 monthly active users (one poll a '
      + 'minute while an app is open 2 h a day, busiest hour 3× the average); 1,500/s leaves ~45 % headroom, and a burst of 2× '
      + 'absorbs apps that all poll on the minute',
  },
  'device-write': {
    rateLimit: 100, burstLimit: 200,
    reason: 'a person switches a device by hand: ~35 writes/s at the planned peak (4 a day per user); 100/s leaves room for '
      + 'automations while a runaway client cannot take the write capacity (each write is 1 WRU on its owner\'s partition)',
  },
  token: {
    rateLimit: 250, burstLimit: 250,
    reason: 'each call makes one kms:Sign, and KMS allows 500 RSA operations/s per account and region, shared by every RSA key '
      + 'and caller: half of it stays free for key rotation, the JWKS and other users of the account; ~35 requests/s at the '
      + 'planned peak (a refresh per app open, expires_in 3600). Burst = rate: a burst above KMS\'s rate only turns into 503s',
  },
  login: {
    rateLimit: 10, burstLimit: 20,
    reason: 'a person signs in about once a month (~0.3/s at the planned peak); each attempt is one scrypt of 64 MiB (~0.1 s of '
      + 'a full CPU), so 10/s bounds a credential-stuffing run across all accounts to 864,000 guesses a day and a few busy '
      + 'functions, while the per-account and per-address throttle (429 with Retry-After) stops guessing at one account',
  },
  mail: {
    rateLimit: 3, burstLimit: 6,
    reason: 'each call sends one e-mail: the four mail routes (sign-up, resend, reset, account deletion) together (12/s) stay under the 14 messages/s SES typically '
      + 'grants a new production account (the sending rate is per account; beyond it SES throttles and we answer 503); '
      + 'sign-ups, resends, resets and deletions are ~0.02/s together at the planned peak, and a higher rate would only serve mail-bombing',
  },
  page: {
    rateLimit: 50, burstLimit: 100,
    reason: 'pages and forms a person uses by hand (consent, account, developer console, the sign-up and reset pages, logout, '
      + 'revocation): under 1/s together at the planned peak; 50/s per route bounds what a crawler or script can cost (1–4 '
      + 'DynamoDB requests each, an scrypt for a new password)',
  },
  metadata: {
    rateLimit: 100, burstLimit: 200,
    reason: 'static documents (discovery, JWKS, OpenAPI) that clients and the JWT authorizer cache: 100/s serves 6,000 servers '
      + 're-reading them every minute; and the static CORS preflights of the token and revocation endpoints, which browsers '
      + 'keep an hour (a browser application whose requests need none never sends one)',
  },
} as const satisfies Record<ThrottleClass, Throttle>;

/**
 * The stage's default route throttle: what API Gateway applies to every route without route settings of
 * its own, here only the 405/404 fallbacks (every route of the table has its class). Low, since no
 * client of the contract calls them; each fallback route key still has its own bucket.
 */
export const DEFAULT_ROUTE_THROTTLE = {
  rateLimit: 20, burstLimit: 40,
  reason: 'only the 405/404 fallbacks, which no client of the contract calls: a mistyped path or method, or a scanner',
} as const satisfies Throttle;

/** Methods a route key can name besides `ANY` (API Gateway HTTP APIs), in the order answers list them (`Allow`, CORS). */
export const ROUTE_KEY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** `methods` without repeats, in ROUTE_KEY_METHODS' order: what `Allow` and the CORS methods list, whatever order the routes come in. */
function inMethodOrder(methods: readonly HttpMethod[]): HttpMethod[] {
  return ROUTE_KEY_METHODS.filter((method): method is HttpMethod => (methods as readonly string[]).includes(method));
}

/** The distinct paths of an API among `routes`, each with the methods it serves (in ROUTE_KEY_METHODS' order). */
export function pathsOf(api: ApiName, routes: readonly Route[]): Map<string, HttpMethod[]> {
  const paths = new Map<string, HttpMethod[]>();
  for (const route of routes.filter((r) => r.api === api)) {
    paths.set(route.path, inMethodOrder([...(paths.get(route.path) ?? []), route.method]));
  }
  return paths;
}

export interface CorsSettings {
  allowOrigins: readonly string[];
  allowMethods: readonly HttpMethod[];
  allowHeaders: readonly string[];
  exposeHeaders: readonly string[];
  maxAgeSeconds: number;
}

/**
 * CORS of the resource API: open, since it authenticates with bearer tokens and never cookies. Its
 * methods are those its routes serve (corsOf).
 */
export const RESOURCE_API_CORS = {
  allowOrigins: ['*'],
  allowHeaders: ['authorization', 'content-type', 'cache-control'],
  exposeHeaders: ['www-authenticate', 'retry-after', 'allow'],
  maxAgeSeconds: 3600,
} as const satisfies Omit<CorsSettings, 'allowMethods'>;

/**
 * CORS of each API (API Gateway configures it per API, not per route), but the methods, which
 * corsOf adds from the routes. The auth API has none: its pages sign in with a session cookie, so no
 * script of another origin may read their answers; a browser's preflight there reaches the
 * `$default` fallback (405 without CORS headers on a known path) and the browser stops. The exception is per client, which a
 * static API setting cannot say: a browser application (a public client) calls the token and
 * revocation endpoints, whose functions answer its CORS themselves (shared/oauth/cors.ts), with
 * `OPTIONS` routes of their own for the preflights.
 */
export const API_CORS: Readonly<Record<ApiName, Omit<CorsSettings, 'allowMethods'> | undefined>> = { resource: RESOURCE_API_CORS, auth: undefined };

/** The CORS settings of `api` (none for the auth API): API_CORS with the methods its `routes` serve. */
export function corsOf(api: ApiName, routes: readonly Route[]): CorsSettings | undefined {
  const cors = API_CORS[api];
  return cors && { ...cors, allowMethods: inMethodOrder(routes.filter((r) => r.api === api).map((r) => r.method)) };
}

/**
 * The route keys that send to the fallback function (functions/registry.ts FALLBACK_FUNCTION) what
 * `routes` do not serve: 405 on a known path, 404 elsewhere. Without CORS: `$default` alone, which
 * takes every request no route matches; the fallback tells a known path by matching the request's
 * path against the table (knownPath), so that a new path costs no route of its own (the parent
 * stack holds every route, and CloudFormation counts them). With CORS no route may take
 * `OPTIONS`, so that API Gateway answers preflights itself (a route that matches a preflight gets it,
 * and `ANY` and `$default` match every method): each other method has its own route per path, and
 * `<method> /{proxy+}` and `<method> /` (a greedy variable needs a segment) stand in for `$default`.
 */
export function fallbackRouteKeys(api: ApiName, routes: readonly Route[]): string[] {
  if (!API_CORS[api]) return ['$default'];
  const paths = pathsOf(api, routes);
  const methods = ROUTE_KEY_METHODS.filter((method) => method !== 'OPTIONS');
  const unknown = paths.has('/') ? ['/{proxy+}'] : ['/{proxy+}', '/'];
  return [
    ...[...paths].flatMap(([path, served]) =>
      methods.filter((method) => !(served as string[]).includes(method)).map((method) => `${method} ${path}`)),
    ...unknown.flatMap((path) => methods.map((method) => `${method} ${path}`)),
  ];
}

/**
 * The path of `api` among `routes` that a request's path falls on, as API Gateway selects routes: a
 * template matches segment by segment (`{name}` one segment, `{name+}` the rest), and among several
 * the one with more literal segments wins (`/account/delete` over `/account/{x}`). Undefined: no
 * path of the API (a 404).
 */
export function knownPath(api: ApiName, routes: readonly Route[], requestPath: string): string | undefined {
  const matching = [...pathsOf(api, routes).keys()].filter((template) => templatePattern(template).test(requestPath));
  const literals = (template: string) => template.split('/').filter((segment) => !segment.startsWith('{')).length;
  return matching.sort((a, b) => literals(b) - literals(a))[0];
}

function templatePattern(template: string): RegExp {
  const source = template.split('/').map((segment) => {
    const variable = /^\{[A-Za-z0-9_]+(\+?)\}$/.exec(segment);
    if (!variable) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return variable[1] ? '.+' : '[^/]+';
  });
  return new RegExp(`^${source.join('/')}$`);
}
