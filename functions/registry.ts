import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { provideEndpointTable, provideRecentSignInRoutes } from '#shared/config';
import type { BenchSpec } from '#shared/bench-floor';
import { ALL_SCOPES } from '#shared/domain/scopes';
import type { BundlingOptions, EndpointDeclaration, EventSourceKind, EndpointTable, FunctionNeeds, OpenApiOperation, SampleSpec } from '#shared/declaration';
import { API_CORS, ROUTE_KEY_METHODS, THROTTLES, type ApiName, type FunctionName, type Route } from '#shared/routes';

// The registry of the functions: it discovers the declarations beside the handlers
// (`functions/<area>/<name>.route.ts`, shared/declaration.ts), checks them, and derives the route
// table from them. Everything that needs to know the functions reads it here: the stack, the IAM
// grants, the local gateway and tools, the OpenAPI document, the benchmark. Adding a function is
// adding its handler and its declaration; nothing here names one.
//
// Bundles cannot discover files: the two functions that answer from the table at run time read
// its serialisable part (endpointTable), which infra/bundling.ts compiles into every bundle, and
// which this module provides to its own process as it loads (before any handler loads, since
// handlers are found through it).

export type { FunctionName } from '#shared/routes';

/** How a function is bundled and what invokes it without an HTTP route: what the stack and the benchmark bundle by. */
export interface FunctionDef extends BundlingOptions {
  /** Handler file, relative to the repository root; it exports `handler`. */
  entry: string;
  schedule?: string;
  eventSource?: EventSourceKind;
  /** Its pages run only for a recent sign-in (EndpointDeclaration.recentSignIn): compiled into its bundle (infra/bundling.ts functionDefine). */
  recentSignIn: boolean;
}

/** A function, as its declaration and its place on disk define it. */
export interface Endpoint extends FunctionDef {
  name: FunctionName;
  /** Its declaration file, relative to the repository root. */
  file: string;
  /** Its HTTP routes (none for a scheduled, event-source or fallback function). */
  routes: readonly Route[];
  /** The 405/404 fallback of both APIs. */
  fallback: boolean;
  needs: FunctionNeeds;
  openApi?: OpenApiOperation;
  sample: SampleSpec;
  /** What the benchmark's default scenario of the function holds against its sample (shared/bench-floor.ts); absent: a floorless "(generic)" row. */
  bench?: BenchSpec;
}

/** A declaration file found on disk, with what it exports as default. */
export interface FoundDeclaration {
  /** Relative to the repository root: `functions/<area>/<name>.route.ts`. */
  file: string;
  declaration: unknown;
}

/** What is wrong with the declarations, each problem on a line of its own naming its file. */
export class EndpointDeclarationError extends Error {
  override name = 'EndpointDeclarationError';
}

const ROOT = join(import.meta.dirname, '..');
export const DECLARATION_SUFFIX = '.route.ts';
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const TRIGGERS = ['routes', 'schedule', 'eventSource', 'fallback'] as const;
// Every kind, and only those: the compiler checks the record's keys against the type.
const EVENT_SOURCES: readonly string[] = Object.keys({ 'table-stream': 0, 'webhook-queue': 0, 'iot-presence': 0 } satisfies Record<EventSourceKind, 0>);
const SIGNING_KEY_USES = ['sign', 'verify', 'rotate'];
const QUEUE_USES = ['send', 'retry'];
const APIS = ['resource', 'auth'];
const METHODS: readonly string[] = ROUTE_KEY_METHODS.filter((m) => ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'].includes(m));
const KNOWN_FIELDS = new Set(['routes', 'schedule', 'eventSource', 'fallback', 'localOnly', 'assets', 'lazyModules', 'needs', 'openApi', 'sample', 'bench', 'recentSignIn']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** The problems of one route of `file`'s declaration. */
function routeProblems(route: unknown, where: string): string[] {
  if (!isObject(route)) return [`${where}: a route must be an object`];
  const problems: string[] = [];
  if (!APIS.includes(route.api as string)) problems.push(`${where}: api must be 'resource' or 'auth', not ${JSON.stringify(route.api)}`);
  if (!METHODS.includes(route.method as string)) problems.push(`${where}: method must be one of ${METHODS.join(', ')}, not ${JSON.stringify(route.method)}`);
  if (typeof route.path !== 'string' || !/^\/[^\s]*$/.test(route.path)) problems.push(`${where}: path must start with / and hold no space, not ${JSON.stringify(route.path)}`);
  if (!Object.hasOwn(THROTTLES, route.throttle as string)) problems.push(`${where}: throttle must be a class of THROTTLES (shared/routes.ts), not ${JSON.stringify(route.throttle)}`);
  if (route.scopes !== undefined
    && !(isStringArray(route.scopes) && route.scopes.length > 0 && route.scopes.every((scope) => (ALL_SCOPES as readonly string[]).includes(scope)))) {
    problems.push(`${where}: scopes must be a non-empty list of ${ALL_SCOPES.join(', ')}`);
  }
  if (route.scopes !== undefined && route.api !== 'resource') problems.push(`${where}: only resource routes take scopes (the JWT authorizer is the resource API's)`);
  if (route.method === 'OPTIONS' && APIS.includes(route.api as string) && API_CORS[route.api as ApiName]) {
    problems.push(`${where}: the ${String(route.api)} API has CORS, so API Gateway answers its preflights itself: no route may take OPTIONS there`);
  }
  if ('fn' in route) problems.push(`${where}: a route names no function (the declaration's file does)`);
  return problems;
}

/** The problems of one declaration; `exists` says whether a file (relative to the root) exists. */
function declarationProblems(file: string, name: string, value: unknown, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  const entry = file.slice(0, -DECLARATION_SUFFIX.length) + '.ts';
  if (!NAME.test(name)) problems.push(`${file}: the function name '${name}' must be lower-case words joined by hyphens`);
  if (!exists(entry)) problems.push(`${file}: no handler ${entry} beside it`);
  if (!isObject(value)) return [...problems, `${file}: must \`export default defineEndpoint({ … })\` (shared/declaration.ts)`];
  const d = value;
  for (const field of Object.keys(d)) if (!KNOWN_FIELDS.has(field)) problems.push(`${file}: unknown field '${field}'`);
  const triggers = TRIGGERS.filter((trigger) => d[trigger] !== undefined);
  if (triggers.length !== 1) {
    problems.push(`${file}: needs exactly one of ${TRIGGERS.join(', ')} (what invokes the function), not ${triggers.length ? triggers.join(' and ') : 'none'}`);
  }
  if (d.routes !== undefined) {
    if (!Array.isArray(d.routes) || d.routes.length === 0) problems.push(`${file}: routes must be a non-empty list`);
    else d.routes.forEach((route, i) => problems.push(...routeProblems(route, `${file}: routes[${i}]`)));
  }
  if (d.schedule !== undefined && (typeof d.schedule !== 'string' || !/^(rate|cron)\(.+\)$/.test(d.schedule))) {
    problems.push(`${file}: schedule must be an EventBridge expression, rate(…) or cron(…)`);
  }
  if (d.eventSource !== undefined && !EVENT_SOURCES.includes(d.eventSource as string)) problems.push(`${file}: eventSource must be one of ${EVENT_SOURCES.join(', ')}`);
  if (d.fallback !== undefined && d.fallback !== true) problems.push(`${file}: fallback must be true when given`);
  if (d.recentSignIn !== undefined && !(d.recentSignIn === true && Array.isArray(d.routes) && d.routes.every((route) => isObject(route) && route.api === 'auth'))) {
    problems.push(`${file}: recentSignIn must be true when given, on a function of auth API pages only`);
  }
  if (d.localOnly !== undefined && typeof d.localOnly !== 'boolean') problems.push(`${file}: localOnly must be a boolean`);
  if (d.assets !== undefined && !isStringArray(d.assets)) problems.push(`${file}: assets must be a list of files of node_modules`);
  if (d.lazyModules !== undefined) {
    if (!isStringArray(d.lazyModules)) problems.push(`${file}: lazyModules must be a list of files`);
    else for (const module of d.lazyModules.filter((m) => !exists(m))) problems.push(`${file}: lazy module ${module} does not exist`);
  }
  if (!isObject(d.needs)) {
    problems.push(`${file}: needs is required, what the handler uses of AWS (its IAM grants); {} when nothing`);
  } else {
    const { table, signingKey, sendsMail, webhookQueue } = d.needs;
    if (table !== undefined && !(Array.isArray(table) && table.every(isObject))) problems.push(`${file}: needs.table must be a list of repository operations (functions/needs.ts)`);
    if (signingKey !== undefined && !SIGNING_KEY_USES.includes(signingKey as string)) problems.push(`${file}: needs.signingKey must be one of ${SIGNING_KEY_USES.join(', ')}`);
    if (sendsMail !== undefined && typeof sendsMail !== 'boolean') problems.push(`${file}: needs.sendsMail must be a boolean`);
    if (webhookQueue !== undefined && !(isStringArray(webhookQueue) && webhookQueue.every((use) => QUEUE_USES.includes(use)))) {
      problems.push(`${file}: needs.webhookQueue must be a list of ${QUEUE_USES.join(', ')}`);
    }
  }
  const scoped = Array.isArray(d.routes) && d.routes.some((route) => isObject(route) && route.api === 'resource' && route.scopes !== undefined);
  if (scoped && !isObject(d.openApi)) problems.push(`${file}: openApi is required with a scoped resource route (the OpenAPI document describes it)`);
  if (!scoped && d.openApi !== undefined) problems.push(`${file}: openApi is only for a function with a scoped resource route`);
  if (isObject(d.openApi) && (typeof d.openApi.summary !== 'string' || !isObject(d.openApi.success))) {
    problems.push(`${file}: openApi needs a summary and its success responses`);
  }
  if (!isObject(d.sample) || !Number.isInteger(d.sample.status) || (d.sample.status as number) < 100 || (d.sample.status as number) > 599
    || typeof d.sample.make !== 'function') {
    problems.push(`${file}: sample is required: the status its handler answers and make(kit), which builds the event (npm run invoke)`);
  }
  if (d.bench !== undefined && !(isObject(d.bench) && Array.isArray(d.bench.floor) && d.bench.floor.every((s) => isObject(s) && typeof s.op === 'string')
    && typeof d.bench.minReason === 'string' && d.bench.minReason !== '')) problems.push(`${file}: bench needs a floor (steps of shared/bench-floor.ts) and its minReason`);
  if (d.bench !== undefined && (d.schedule ?? d.eventSource) !== undefined) problems.push(`${file}: bench is for an HTTP function (the others' scenarios are written in bench/scenarios.ts)`);
  return problems;
}

/**
 * The functions `found` declares, each named by its file, checked: a unique, well-formed name, a
 * handler beside its declaration, a well-formed declaration, no route key twice, one fallback.
 * Throws EndpointDeclarationError listing every problem.
 */
export function endpointsOf(found: readonly FoundDeclaration[], exists: (path: string) => boolean): Endpoint[] {
  const problems: string[] = [];
  const files = new Map<string, string>();
  for (const { file, declaration } of found) {
    const name = file.split('/').pop()!.slice(0, -DECLARATION_SUFFIX.length);
    const other = files.get(name);
    if (other) problems.push(`${file}: the function name '${name}' is taken by ${other}`);
    files.set(name, file);
    problems.push(...declarationProblems(file, name, declaration, exists));
  }
  if (problems.length === 0) {
    const keys = new Map<string, string>();
    for (const { file, declaration } of found) {
      for (const route of ((declaration as EndpointDeclaration).routes ?? [])) {
        const key = `${route.api} ${route.method} ${route.path}`;
        const other = keys.get(key);
        if (other) problems.push(`${file}: the ${route.api} API's route ${route.method} ${route.path} is declared by ${other} too`);
        keys.set(key, file);
      }
    }
    const fallbacks = found.filter(({ declaration }) => (declaration as EndpointDeclaration).fallback);
    if (fallbacks.length !== 1) problems.push(`exactly one function must be the fallback (fallback: true), not ${fallbacks.map((f) => f.file).join(', ') || 'none'}`);
  }
  if (problems.length > 0) throw new EndpointDeclarationError(`Bad function declarations:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return found.map(({ file, declaration }) => {
    const d = declaration as EndpointDeclaration;
    const name = file.split('/').pop()!.slice(0, -DECLARATION_SUFFIX.length);
    return {
      name,
      file,
      entry: file.slice(0, -DECLARATION_SUFFIX.length) + '.ts',
      ...(d.localOnly ? { localOnly: true } : {}),
      ...(d.assets ? { assets: d.assets } : {}),
      ...(d.lazyModules ? { lazyModules: d.lazyModules } : {}),
      ...(d.schedule ? { schedule: d.schedule } : {}),
      ...(d.eventSource ? { eventSource: d.eventSource } : {}),
      routes: (d.routes ?? []).map((route) => ({ ...route, fn: name })),
      fallback: d.fallback === true,
      needs: d.needs,
      ...(d.openApi ? { openApi: d.openApi } : {}),
      sample: d.sample,
      ...(d.bench ? { bench: d.bench } : {}),
      recentSignIn: d.recentSignIn === true,
    };
  });
}

const FUNCTIONS_DIR = import.meta.dirname;

/** The declaration files under functions/, sorted: the order of everything derived from them. */
export function declarationFiles(): string[] {
  return readdirSync(FUNCTIONS_DIR, { recursive: true, encoding: 'utf8' })
    .map((name) => name.split('\\').join('/'))
    .filter((name) => name.endsWith(DECLARATION_SUFFIX))
    .sort()
    .map((name) => `functions/${name}`);
}

const found = await Promise.all(declarationFiles().map(async (file): Promise<FoundDeclaration> => ({
  file,
  declaration: ((await import(pathToFileURL(join(ROOT, file)).href)) as { default?: unknown }).default,
})));

/** Every function, in the order of its declaration file's path. */
export const ENDPOINTS: readonly Endpoint[] = endpointsOf(found, (path) => existsSync(join(ROOT, path)));

const BY_NAME = new Map(ENDPOINTS.map((endpoint) => [endpoint.name, endpoint]));

/** Whether `name` is a function's. */
export const isFunctionName = (name: string): boolean => BY_NAME.has(name);

/** The function named `fn`; throws for a name no declaration has. */
export function endpointOf(fn: FunctionName): Endpoint {
  const endpoint = BY_NAME.get(fn);
  if (!endpoint) throw new Error(`Unknown function '${fn}': no functions/<area>/${fn}${DECLARATION_SUFFIX} declares it`);
  return endpoint;
}

/** One Lambda function each, by name. */
export const FUNCTIONS: Readonly<Record<FunctionName, FunctionDef>> = Object.fromEntries(ENDPOINTS.map((endpoint) => [endpoint.name, endpoint]));

/** The route table: every route of every function. */
export const ROUTES: readonly Route[] = ENDPOINTS.flatMap((endpoint) => endpoint.routes);

/** The routes deployed to AWS: all but the local-only developer tools'. */
export const DEPLOYED_ROUTES: readonly Route[] = ENDPOINTS.filter((endpoint) => !endpoint.localOnly).flatMap((endpoint) => endpoint.routes);

/** The functions an EventBridge schedule invokes, with their schedule expression. */
export const SCHEDULED_FUNCTIONS: readonly { fn: FunctionName; schedule: string }[] = ENDPOINTS
  .flatMap((endpoint) => (endpoint.schedule ? [{ fn: endpoint.name, schedule: endpoint.schedule }] : []));

/** Function that answers 405 (known path, other method) and 404 (unknown path) on both APIs. */
export const FALLBACK_FUNCTION: FunctionName = ENDPOINTS.find((endpoint) => endpoint.fallback)!.name;

/** The serialisable part of the table (shared/declaration.ts EndpointTable): every route, and the OpenAPI operations. */
export function endpointTable(): EndpointTable {
  return {
    routes: ROUTES,
    operations: Object.fromEntries(ENDPOINTS.flatMap((endpoint) => (endpoint.openApi ? [[endpoint.name, endpoint.openApi]] : []))),
  };
}

/** endpointTable as JSON: what the bundles carry compiled in (infra/bundling.ts) and this process is given below. */
export const endpointTableJson = (): string => JSON.stringify(endpointTable());

/** The route keys of the functions that ask for a recent sign-in, for a local process (a bundle carries its own answer instead). */
export const recentSignInRouteKeys = (): string[] =>
  ENDPOINTS.filter((endpoint) => endpoint.recentSignIn).flatMap((endpoint) => endpoint.routes.map((route) => `${route.method} ${route.path}`));

provideEndpointTable(endpointTableJson());
provideRecentSignInRoutes(recentSignInRouteKeys());
