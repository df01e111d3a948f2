import { RENDERER_FILE } from '#shared/assets';
import { PASSWORD_STRENGTH_ENTRY } from '#shared/domain/password-policy';
import type { Scope } from '#shared/domain/scopes';

// The one route table. The CDK stack, the local gateway and the 405 fallback are all derived
// from it: a new endpoint is one handler file plus one line here.

export type ApiName = 'resource' | 'auth';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface FunctionDef {
  /** Handler file, relative to the repository root; it exports `handler`. Its AWS grants: infra/function-grants.ts. */
  entry: string;
  /** Runs only in the local service, never deployed (developer tools such as the outbox). */
  localOnly?: boolean;
  /**
   * Files of node_modules the handler reads at run time (not bundled code), copied into its
   * Lambda package at the same path, so that it resolves them as it does locally.
   */
  assets?: readonly string[];
  /**
   * Modules the handler imports only when it first needs them (too large for its bundle), each
   * bundled on its own with the same settings, beside the handler's bundle as `<module name>.mjs`
   * (e.g. shared/domain/password-strength.ts → password-strength.mjs).
   */
  lazyModules?: readonly string[];
  /** Has no HTTP route: an EventBridge rule invokes it on this schedule expression (and an operator by `aws lambda invoke`). */
  schedule?: string;
  /**
   * Has no HTTP route: an event source mapping invokes it with the records of the table's stream
   * or the messages of the webhook delivery queue (infra/constructs/webhooks.ts).
   */
  eventSource?: 'table-stream' | 'webhook-queue';
}

/** One Lambda function each. */
export const FUNCTIONS = {
  'get-user': { entry: 'functions/user/get-user.ts' },
  'get-avatar': { entry: 'functions/user/get-avatar.ts' },
  'list-devices': { entry: 'functions/devices/list-devices.ts' },
  'get-device': { entry: 'functions/devices/get-device.ts' },
  'update-device': { entry: 'functions/devices/update-device.ts' },
  'get-openapi': { entry: 'functions/docs/get-openapi.ts' },
  'get-api-reference': { entry: 'functions/docs/get-api-reference.ts', assets: [RENDERER_FILE] },
  'get-api-reference-script': { entry: 'functions/docs/get-api-reference-script.ts', assets: [RENDERER_FILE] },
  'get-discovery': { entry: 'functions/auth/get-discovery.ts' },
  'get-authorize': { entry: 'functions/auth/get-authorize.ts' },
  'post-authorize': { entry: 'functions/auth/post-authorize.ts' },
  'post-token': { entry: 'functions/auth/post-token.ts' },
  'post-revoke': { entry: 'functions/auth/post-revoke.ts' },
  'get-login': { entry: 'functions/auth/get-login.ts' },
  'post-login': { entry: 'functions/auth/post-login.ts' },
  'post-logout': { entry: 'functions/auth/post-logout.ts' },
  'get-home': { entry: 'functions/account/get-home.ts' },
  'get-signup': { entry: 'functions/account/get-signup.ts' },
  'post-signup': { entry: 'functions/account/post-signup.ts', lazyModules: [PASSWORD_STRENGTH_ENTRY] },
  'get-confirm-email': { entry: 'functions/account/get-confirm-email.ts' },
  'post-confirm-email': { entry: 'functions/account/post-confirm-email.ts' },
  'post-resend-confirmation': { entry: 'functions/account/post-resend-confirmation.ts' },
  'get-password-reset': { entry: 'functions/account/get-password-reset.ts' },
  'post-password-reset': { entry: 'functions/account/post-password-reset.ts' },
  'get-new-password': { entry: 'functions/account/get-new-password.ts' },
  'post-new-password': { entry: 'functions/account/post-new-password.ts', lazyModules: [PASSWORD_STRENGTH_ENTRY] },
  'get-account': { entry: 'functions/account/get-account.ts' },
  'post-revoke-app': { entry: 'functions/account/post-revoke-app.ts' },
  'get-outbox': { entry: 'functions/account/get-outbox.ts', localOnly: true },
  'get-developer': { entry: 'functions/developer/get-developer.ts' },
  'post-register-app': { entry: 'functions/developer/post-register-app.ts' },
  'get-app': { entry: 'functions/developer/get-app.ts' },
  'post-update-app': { entry: 'functions/developer/post-update-app.ts' },
  'post-rotate-secret': { entry: 'functions/developer/post-rotate-secret.ts' },
  'get-app-secret': { entry: 'functions/developer/get-app-secret.ts' },
  'post-retire-secret': { entry: 'functions/developer/post-retire-secret.ts' },
  'get-delete-app': { entry: 'functions/developer/get-delete-app.ts' },
  'post-delete-app': { entry: 'functions/developer/post-delete-app.ts' },
  'post-webhook': { entry: 'functions/developer/post-webhook.ts' },
  'post-rotate-webhook-secret': { entry: 'functions/developer/post-rotate-webhook-secret.ts' },
  'post-delete-webhook': { entry: 'functions/developer/post-delete-webhook.ts' },
  'post-send-test-event': { entry: 'functions/developer/post-send-test-event.ts' },
  'post-redeliver-event': { entry: 'functions/developer/post-redeliver-event.ts' },
  'get-jwks': { entry: 'functions/auth/get-jwks.ts' },
  'http-fallback': { entry: 'functions/fallback/http-fallback.ts' },
  'rotate-signing-key': { entry: 'functions/ops/rotate-signing-key.ts', schedule: 'rate(1 hour)' },
  'fan-out-events': { entry: 'functions/webhooks/fan-out-events.ts', eventSource: 'table-stream' },
  // The e-mail to the developer of a disabled webhook carries the SES client: loaded only on that rare path.
  'deliver-webhooks': { entry: 'functions/webhooks/deliver-webhooks.ts', eventSource: 'webhook-queue', lazyModules: ['shared/webhooks/disabled-notice.ts'] },
} as const satisfies Record<string, FunctionDef>;

export type FunctionName = keyof typeof FUNCTIONS;

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

/** Resource routes are served bare and under /api, identically: reads and device writes are throttled apart. */
const resource = (method: HttpMethod, path: string, fn: FunctionName, scope: Scope): Route[] =>
  ['', '/api'].map((prefix) => ({
    api: 'resource', method, path: `${prefix}${path}`, fn, scopes: [scope], throttle: method === 'GET' ? 'resource-read' : 'device-write',
  }));
const auth = (method: HttpMethod, path: string, fn: FunctionName, throttle: ThrottleClass): Route => ({ api: 'auth', method, path, fn, throttle });

export const ROUTES: readonly Route[] = [
  ...resource('GET', '/user', 'get-user', 'read_user'),
  ...resource('GET', '/devices', 'list-devices', 'read_device'),
  ...resource('GET', '/devices/{device_id}', 'get-device', 'read_device'),
  ...resource('PUT', '/devices/{device_id}', 'update-device', 'write_device'),
  { api: 'resource', method: 'GET', path: '/openapi.json', fn: 'get-openapi', throttle: 'metadata' },
  { api: 'resource', method: 'GET', path: '/avatars/{file}', fn: 'get-avatar', throttle: 'metadata' },
  { api: 'resource', method: 'GET', path: '/docs', fn: 'get-api-reference', throttle: 'metadata' },
  { api: 'resource', method: 'GET', path: '/docs/reference.js', fn: 'get-api-reference-script', throttle: 'metadata' },
  auth('GET', '/.well-known/openid-configuration', 'get-discovery', 'metadata'),
  auth('GET', '/.well-known/oauth-authorization-server', 'get-discovery', 'metadata'),
  auth('GET', '/.well-known/jwks.json', 'get-jwks', 'metadata'),
  auth('GET', '/oauth/authorize', 'get-authorize', 'page'),
  auth('POST', '/oauth/authorize', 'post-authorize', 'page'),
  auth('POST', '/oauth/token', 'post-token', 'token'),
  auth('POST', '/oauth/revoke', 'post-revoke', 'page'),
  auth('GET', '/login', 'get-login', 'page'),
  auth('POST', '/login', 'post-login', 'login'),
  auth('POST', '/logout', 'post-logout', 'page'),
  auth('GET', '/', 'get-home', 'page'),
  auth('GET', '/signup', 'get-signup', 'page'),
  auth('POST', '/signup', 'post-signup', 'mail'),
  auth('GET', '/confirm-email', 'get-confirm-email', 'page'),
  auth('POST', '/confirm-email', 'post-confirm-email', 'page'),
  auth('POST', '/confirm-email/resend', 'post-resend-confirmation', 'mail'),
  auth('GET', '/password-reset', 'get-password-reset', 'page'),
  auth('POST', '/password-reset', 'post-password-reset', 'mail'),
  auth('GET', '/password-reset/confirm', 'get-new-password', 'page'),
  auth('POST', '/password-reset/confirm', 'post-new-password', 'page'),
  auth('GET', '/account', 'get-account', 'page'),
  auth('POST', '/account/apps/{client_id}/revoke', 'post-revoke-app', 'page'),
  auth('GET', '/developer', 'get-developer', 'page'),
  auth('POST', '/developer/apps', 'post-register-app', 'page'),
  auth('GET', '/developer/apps/{client_id}', 'get-app', 'page'),
  auth('POST', '/developer/apps/{client_id}', 'post-update-app', 'page'),
  auth('POST', '/developer/apps/{client_id}/secret', 'post-rotate-secret', 'page'),
  auth('GET', '/developer/apps/{client_id}/secret', 'get-app-secret', 'page'),
  auth('POST', '/developer/apps/{client_id}/secret/retire', 'post-retire-secret', 'page'),
  auth('GET', '/developer/apps/{client_id}/delete', 'get-delete-app', 'page'),
  auth('POST', '/developer/apps/{client_id}/delete', 'post-delete-app', 'page'),
  auth('POST', '/developer/apps/{client_id}/webhook', 'post-webhook', 'page'),
  auth('POST', '/developer/apps/{client_id}/webhook/secret', 'post-rotate-webhook-secret', 'page'),
  auth('POST', '/developer/apps/{client_id}/webhook/delete', 'post-delete-webhook', 'page'),
  auth('POST', '/developer/apps/{client_id}/webhook/test', 'post-send-test-event', 'page'),
  auth('POST', '/developer/apps/{client_id}/webhook/deliveries/{webhook_id}', 'post-redeliver-event', 'page'),
  auth('GET', '/outbox', 'get-outbox', 'page'),
];

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
    rateLimit: 4, burstLimit: 8,
    reason: 'each call sends one e-mail: the three mail routes together (12/s) stay under the 14 messages/s SES typically '
      + 'grants a new production account (the sending rate is per account; beyond it SES throttles and we answer 503); '
      + 'sign-ups, resends and resets are ~0.02/s together at the planned peak, and a higher rate would only serve mail-bombing',
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
      + 're-reading them every minute',
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

/** The functions an EventBridge schedule invokes, with their schedule expression. */
export const SCHEDULED_FUNCTIONS: readonly { fn: FunctionName; schedule: string }[] = (Object.entries(FUNCTIONS) as [FunctionName, FunctionDef][])
  .flatMap(([fn, def]) => (def.schedule ? [{ fn, schedule: def.schedule }] : []));

/** The routes deployed to AWS: all but the local-only developer tools. */
export const DEPLOYED_ROUTES: readonly Route[] = ROUTES.filter((route) => !(FUNCTIONS[route.fn] as FunctionDef).localOnly);

/** Function that answers 405 (known path, other method) and 404 (unknown path) on both APIs. */
export const FALLBACK_FUNCTION: FunctionName = 'http-fallback';

/** The distinct paths of an API, each with the methods it serves. */
export function pathsOf(api: ApiName, routes: readonly Route[] = ROUTES): Map<string, HttpMethod[]> {
  const paths = new Map<string, HttpMethod[]>();
  for (const route of routes.filter((r) => r.api === api)) {
    paths.set(route.path, [...(paths.get(route.path) ?? []), route.method]);
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

/** CORS of the resource API: open, since it authenticates with bearer tokens and never cookies. */
export const RESOURCE_API_CORS = {
  allowOrigins: ['*'],
  allowMethods: ['GET', 'PUT'],
  allowHeaders: ['authorization', 'content-type', 'cache-control'],
  exposeHeaders: ['www-authenticate', 'retry-after', 'allow'],
  maxAgeSeconds: 3600,
} as const satisfies CorsSettings;

/**
 * CORS of each API (API Gateway configures it per API, not per route). The auth API has none: its
 * clients are confidential (a client secret cannot live in a browser, so no page script calls the
 * token or revocation endpoint) and its pages sign in with a session cookie, so no script of another
 * origin may read its answers. A browser's preflight there reaches the `ANY` fallback (405 without
 * CORS headers) and the browser stops.
 */
export const API_CORS: Readonly<Record<ApiName, CorsSettings | undefined>> = { resource: RESOURCE_API_CORS, auth: undefined };

/** Methods a route key can name besides `ANY` (API Gateway HTTP APIs). */
export const ROUTE_KEY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/**
 * The route keys that send to FALLBACK_FUNCTION what the table does not serve: 405 on a known path,
 * 404 elsewhere. Without CORS: `ANY <path>` per path, and `$default`. With CORS no route may take
 * `OPTIONS`, so that API Gateway answers preflights itself (a route that matches a preflight gets it,
 * and `ANY` and `$default` match every method): each other method has its own route per path, and
 * `<method> /{proxy+}` and `<method> /` (a greedy variable needs a segment) stand in for `$default`.
 */
export function fallbackRouteKeys(api: ApiName, routes: readonly Route[] = ROUTES): string[] {
  const paths = pathsOf(api, routes);
  if (!API_CORS[api]) return [...[...paths.keys()].map((path) => `ANY ${path}`), '$default'];
  const methods = ROUTE_KEY_METHODS.filter((method) => method !== 'OPTIONS');
  const unknown = paths.has('/') ? ['/{proxy+}'] : ['/{proxy+}', '/'];
  return [
    ...[...paths].flatMap(([path, served]) =>
      methods.filter((method) => !(served as string[]).includes(method)).map((method) => `${method} ${path}`)),
    ...unknown.flatMap((path) => methods.map((method) => `${method} ${path}`)),
  ];
}
