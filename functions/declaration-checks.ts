import { ALL_SCOPES } from '#shared/domain/scopes';
import type { EventSourceKind } from '#shared/declaration';
import { API_CORS, ROUTE_KEY_METHODS, THROTTLES, type ApiName } from '#shared/routes';

// The checks of one declaration (functions/<area>/<name>.route.ts) that the registry
// (functions/registry.ts) runs when it loads: what the compiler cannot see in a value read from disk.

/** A declaration's file name ends so; what comes before is the function's name. */
export const DECLARATION_SUFFIX = '.route.ts';
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const TRIGGERS = ['routes', 'schedule', 'eventSource', 'fallback'] as const;
// Every kind, and only those: the compiler checks the record's keys against the type.
const EVENT_SOURCES: readonly string[] = Object.keys({ 'table-stream': 0, 'webhook-queue': 0, 'iot-presence': 0, 'iot-provisioning-hook': 0, 'iot-shadow': 0 } satisfies Record<EventSourceKind, 0>);
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
export function declarationProblems(file: string, name: string, value: unknown, exists: (path: string) => boolean): string[] {
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
    const { table, signingKey, sendsMail, webhookQueue, deviceCertificates } = d.needs;
    if (deviceCertificates !== undefined && deviceCertificates !== 'deactivate') problems.push(`${file}: needs.deviceCertificates must be 'deactivate' when given`);
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
