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
  /** Has no HTTP route: an EventBridge rule invokes it on this schedule expression (and an operator by `aws lambda invoke`). */
  schedule?: string;
}

/** One Lambda function each. */
export const FUNCTIONS = {
  'get-user': { entry: 'functions/user/get-user.ts' },
  'list-devices': { entry: 'functions/devices/list-devices.ts' },
  'get-device': { entry: 'functions/devices/get-device.ts' },
  'update-device': { entry: 'functions/devices/update-device.ts' },
  'get-openapi': { entry: 'functions/docs/get-openapi.ts' },
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
  'post-signup': { entry: 'functions/account/post-signup.ts' },
  'get-confirm-email': { entry: 'functions/account/get-confirm-email.ts' },
  'post-confirm-email': { entry: 'functions/account/post-confirm-email.ts' },
  'post-resend-confirmation': { entry: 'functions/account/post-resend-confirmation.ts' },
  'get-password-reset': { entry: 'functions/account/get-password-reset.ts' },
  'post-password-reset': { entry: 'functions/account/post-password-reset.ts' },
  'get-new-password': { entry: 'functions/account/get-new-password.ts' },
  'post-new-password': { entry: 'functions/account/post-new-password.ts' },
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
  'get-jwks': { entry: 'functions/auth/get-jwks.ts' },
  'http-fallback': { entry: 'functions/fallback/http-fallback.ts' },
  'rotate-signing-key': { entry: 'functions/ops/rotate-signing-key.ts', schedule: 'rate(1 hour)' },
} as const satisfies Record<string, FunctionDef>;

export type FunctionName = keyof typeof FUNCTIONS;

export interface Route {
  api: ApiName;
  method: HttpMethod;
  path: string;
  fn: FunctionName;
  /** Present: the route needs a valid access token holding one of these scopes (JWT authorizer). */
  scopes?: readonly Scope[];
}

/** Resource routes are served bare and under /api, identically. */
const resource = (method: HttpMethod, path: string, fn: FunctionName, scope: Scope): Route[] =>
  ['', '/api'].map((prefix) => ({ api: 'resource', method, path: `${prefix}${path}`, fn, scopes: [scope] }));
const auth = (method: HttpMethod, path: string, fn: FunctionName): Route => ({ api: 'auth', method, path, fn });

export const ROUTES: readonly Route[] = [
  ...resource('GET', '/user', 'get-user', 'read_user'),
  ...resource('GET', '/devices', 'list-devices', 'read_device'),
  ...resource('GET', '/devices/{device_id}', 'get-device', 'read_device'),
  ...resource('PUT', '/devices/{device_id}', 'update-device', 'write_device'),
  { api: 'resource', method: 'GET', path: '/openapi.json', fn: 'get-openapi' },
  auth('GET', '/.well-known/openid-configuration', 'get-discovery'),
  auth('GET', '/.well-known/oauth-authorization-server', 'get-discovery'),
  auth('GET', '/.well-known/jwks.json', 'get-jwks'),
  auth('GET', '/oauth/authorize', 'get-authorize'),
  auth('POST', '/oauth/authorize', 'post-authorize'),
  auth('POST', '/oauth/token', 'post-token'),
  auth('POST', '/oauth/revoke', 'post-revoke'),
  auth('GET', '/login', 'get-login'),
  auth('POST', '/login', 'post-login'),
  auth('POST', '/logout', 'post-logout'),
  auth('GET', '/', 'get-home'),
  auth('GET', '/signup', 'get-signup'),
  auth('POST', '/signup', 'post-signup'),
  auth('GET', '/confirm-email', 'get-confirm-email'),
  auth('POST', '/confirm-email', 'post-confirm-email'),
  auth('POST', '/confirm-email/resend', 'post-resend-confirmation'),
  auth('GET', '/password-reset', 'get-password-reset'),
  auth('POST', '/password-reset', 'post-password-reset'),
  auth('GET', '/password-reset/confirm', 'get-new-password'),
  auth('POST', '/password-reset/confirm', 'post-new-password'),
  auth('GET', '/account', 'get-account'),
  auth('POST', '/account/apps/{client_id}/revoke', 'post-revoke-app'),
  auth('GET', '/developer', 'get-developer'),
  auth('POST', '/developer/apps', 'post-register-app'),
  auth('GET', '/developer/apps/{client_id}', 'get-app'),
  auth('POST', '/developer/apps/{client_id}', 'post-update-app'),
  auth('POST', '/developer/apps/{client_id}/secret', 'post-rotate-secret'),
  auth('GET', '/developer/apps/{client_id}/secret', 'get-app-secret'),
  auth('POST', '/developer/apps/{client_id}/secret/retire', 'post-retire-secret'),
  auth('GET', '/developer/apps/{client_id}/delete', 'get-delete-app'),
  auth('POST', '/developer/apps/{client_id}/delete', 'post-delete-app'),
  auth('GET', '/outbox', 'get-outbox'),
];

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
