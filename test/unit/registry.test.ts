import { describe, expect, it } from 'vitest';
import {
  ENDPOINTS, endpointOf, endpointsOf, endpointTable, endpointTableJson, FALLBACK_FUNCTION, FUNCTIONS, isFunctionName, ROUTES,
  type FoundDeclaration,
} from '#functions/registry';
import { auth, bundledTable, defineEndpoint, resource, type SampleSpec } from '#shared/declaration';

// The registry of the functions (functions/registry.ts): one declaration per function beside its
// handler, and everything else derived from the declarations. A declaration
// that lacks what the stack, the IAM grants, the OpenAPI document or `npm run invoke` need is
// refused: by the compiler (defineEndpoint's type) and, whatever its type, when the registry loads.

const sample: SampleSpec = { status: 200, make: (kit) => kit.page('GET /x') };
const operation = { summary: 'One thing', success: { 200: { description: 'The thing' } } };

/** Files that exist, for endpointsOf: every handler of the cases below. */
const HANDLERS = new Set(['functions/things/get-thing.ts', 'functions/things/put-thing.ts', 'functions/fallback/http-fallback.ts', 'functions/other/get-thing.ts']);
const exists = (path: string) => HANDLERS.has(path);
const FALLBACK: FoundDeclaration = { file: 'functions/fallback/http-fallback.route.ts', declaration: { fallback: true, needs: {}, sample } };
const GOOD = { routes: [auth('GET', '/thing', 'page')], needs: {}, sample };

/** The problems endpointsOf reports for `declarations` (with the fallback), one per line; [] when it accepts them. */
function problems(...declarations: FoundDeclaration[]): string[] {
  try {
    endpointsOf([FALLBACK, ...declarations], exists);
    return [];
  } catch (error) {
    return (error as Error).message.split('\n').slice(1).map((line) => line.trim());
  }
}
const thing = (declaration: unknown, file = 'functions/things/get-thing.route.ts'): FoundDeclaration => ({ file, declaration });

describe('the registry of the functions', () => {
  it('finds the declaration of every function, each beside its handler, with one fallback', () => {
    expect(ENDPOINTS.length).toBeGreaterThan(40);
    for (const endpoint of ENDPOINTS) {
      expect(endpoint.entry).toBe(endpoint.file.replace(/\.route\.ts$/, '.ts'));
      expect(endpoint.entry.split('/').pop()).toBe(`${endpoint.name}.ts`);
    }
    expect(Object.keys(FUNCTIONS)).toEqual(ENDPOINTS.map((e) => e.name));
    expect(FALLBACK_FUNCTION).toBe('http-fallback');
    expect(ROUTES.every((route) => isFunctionName(route.fn))).toBe(true);
  });

  it('refuses to look up a function no declaration has, naming it', () => {
    expect(() => endpointOf('no-such-function')).toThrow("Unknown function 'no-such-function': no functions/<area>/no-such-function.route.ts declares it");
    expect(isFunctionName('toString')).toBe(false);
    expect(isFunctionName('get-user')).toBe(true);
  });

  it('gives this process the endpoint table the bundles carry compiled in', () => {
    expect(JSON.parse(endpointTableJson())).toEqual(endpointTable());
    expect(bundledTable()).toEqual(JSON.parse(endpointTableJson()));
    // An operation for each function with a scoped resource route, and for no other.
    const scoped = ENDPOINTS.filter((e) => e.routes.some((route) => route.api === 'resource' && route.scopes)).map((e) => e.name);
    expect(Object.keys(endpointTable().operations)).toEqual(scoped);
    expect(scoped).toEqual(expect.arrayContaining(['get-device', 'get-user', 'list-devices', 'update-device']));
  });

  it('accepts a complete declaration and names its function by its file', () => {
    expect(problems(thing(GOOD))).toEqual([]);
    const [, endpoint] = endpointsOf([FALLBACK, thing(GOOD)], exists);
    expect(endpoint).toMatchObject({ name: 'get-thing', entry: 'functions/things/get-thing.ts', routes: [{ api: 'auth', method: 'GET', path: '/thing', fn: 'get-thing' }] });
  });

  it('refuses an incomplete declaration, saying what is missing', () => {
    expect(problems(thing(undefined))).toEqual(['functions/things/get-thing.route.ts: must `export default defineEndpoint({ … })` (shared/declaration.ts)']);
    expect(problems(thing({ routes: GOOD.routes, sample }))).toEqual([
      'functions/things/get-thing.route.ts: needs is required, what the handler uses of AWS (its IAM grants); {} when nothing',
    ]);
    expect(problems(thing({ routes: GOOD.routes, needs: {} }))).toEqual([
      'functions/things/get-thing.route.ts: sample is required: the status its handler answers and make(kit), which builds the event (npm run invoke)',
    ]);
    expect(problems(thing({ needs: {}, sample }))).toEqual([
      'functions/things/get-thing.route.ts: needs exactly one of routes, schedule, eventSource, fallback (what invokes the function), not none',
    ]);
    expect(problems(thing({ ...GOOD, schedule: 'rate(1 hour)' }))).toEqual([
      'functions/things/get-thing.route.ts: needs exactly one of routes, schedule, eventSource, fallback (what invokes the function), not routes and schedule',
    ]);
    expect(problems(thing({ ...GOOD, routes: [] }))).toEqual(['functions/things/get-thing.route.ts: routes must be a non-empty list']);
  });

  it('requires the OpenAPI operation of a scoped resource route, and refuses one elsewhere', () => {
    expect(problems(thing({ routes: resource('GET', '/things', 'read_device'), needs: {}, sample }))).toEqual([
      'functions/things/get-thing.route.ts: openApi is required with a scoped resource route (the OpenAPI document describes it)',
    ]);
    expect(problems(thing({ routes: resource('GET', '/things', 'read_device'), needs: {}, openApi: operation, sample }))).toEqual([]);
    expect(problems(thing({ ...GOOD, openApi: operation }))).toEqual(['functions/things/get-thing.route.ts: openApi is only for a function with a scoped resource route']);
  });

  it('takes an OPTIONS route only on the API without CORS, where API Gateway does not answer preflights itself', () => {
    const preflight = (api: 'auth' | 'resource') => thing({ routes: [{ api, method: 'OPTIONS', path: '/things', throttle: 'metadata' }], needs: {}, sample });
    expect(problems(preflight('auth'))).toEqual([]);
    expect(problems(preflight('resource'))).toEqual([
      'functions/things/get-thing.route.ts: routes[0]: the resource API has CORS, so API Gateway answers its preflights itself: no route may take OPTIONS there',
    ]);
  });

  it('refuses a malformed route, need or sample', () => {
    expect(problems(thing({
      routes: [{ api: 'admin', method: 'PATCH', path: 'thing', throttle: 'fast', scopes: ['read_all'], fn: 'other' }], needs: { signingKey: 'steal', webhookQueue: ['drop'] },
      sample: { status: 'ok', make: () => undefined },
    }))).toEqual([
      'functions/things/get-thing.route.ts: routes[0]: api must be \'resource\' or \'auth\', not "admin"',
      'functions/things/get-thing.route.ts: routes[0]: method must be one of GET, POST, PUT, DELETE, OPTIONS, not "PATCH"',
      'functions/things/get-thing.route.ts: routes[0]: path must start with / and hold no space, not "thing"',
      'functions/things/get-thing.route.ts: routes[0]: throttle must be a class of THROTTLES (shared/routes.ts), not "fast"',
      'functions/things/get-thing.route.ts: routes[0]: scopes must be a non-empty list of read_user, read_device, write_device',
      'functions/things/get-thing.route.ts: routes[0]: only resource routes take scopes (the JWT authorizer is the resource API\'s)',
      'functions/things/get-thing.route.ts: routes[0]: a route names no function (the declaration\'s file does)',
      'functions/things/get-thing.route.ts: needs.signingKey must be one of sign, verify, rotate',
      'functions/things/get-thing.route.ts: needs.webhookQueue must be a list of send, retry',
      'functions/things/get-thing.route.ts: sample is required: the status its handler answers and make(kit), which builds the event (npm run invoke)',
    ]);
    expect(problems(thing({ ...GOOD, lazyModules: ['shared/no-such-module.ts'], rateLimit: 5 }))).toEqual([
      'functions/things/get-thing.route.ts: unknown field \'rateLimit\'',
      'functions/things/get-thing.route.ts: lazy module shared/no-such-module.ts does not exist',
    ]);
  });

  it('takes a bench (the floor of the sample\'s call) from an HTTP function only, and a well-formed one', () => {
    expect(problems(thing({ ...GOOD, bench: { floor: [{ op: 'GetItem', of: 'user' }], minReason: 'GetItem of the profile' } }))).toEqual([]);
    expect(problems(thing({ ...GOOD, bench: { floor: 'GetItem(user)' } }))).toEqual([
      'functions/things/get-thing.route.ts: bench needs a floor (steps of shared/bench-floor.ts) and its minReason',
    ]);
    expect(problems(thing({ schedule: 'rate(1 hour)', needs: {}, sample, bench: { floor: [], minReason: 'nothing read' } }))).toEqual([
      'functions/things/get-thing.route.ts: bench is for an HTTP function (the others\' scenarios are written in bench/scenarios.ts)',
    ]);
  });

  it('refuses a declaration without a handler, a name taken twice, a route declared twice, and any number of fallbacks but one', () => {
    expect(problems(thing(GOOD, 'functions/things/delete-thing.route.ts'))).toEqual([
      'functions/things/delete-thing.route.ts: no handler functions/things/delete-thing.ts beside it',
    ]);
    expect(problems(thing(GOOD), thing({ ...GOOD, routes: [auth('GET', '/other', 'page')] }, 'functions/other/get-thing.route.ts'))).toEqual([
      'functions/other/get-thing.route.ts: the function name \'get-thing\' is taken by functions/things/get-thing.route.ts',
    ]);
    expect(problems(thing(GOOD), thing({ ...GOOD, routes: [auth('GET', '/thing', 'page')] }, 'functions/things/put-thing.route.ts'))).toEqual([
      'functions/things/put-thing.route.ts: the auth API\'s route GET /thing is declared by functions/things/get-thing.route.ts too',
    ]);
    expect(problems(thing({ fallback: true, needs: {}, sample }))).toEqual([
      'exactly one function must be the fallback (fallback: true), not functions/fallback/http-fallback.route.ts, functions/things/get-thing.route.ts',
    ]);
    expect(() => endpointsOf([thing(GOOD)], exists)).toThrow('exactly one function must be the fallback (fallback: true), not none');
  });

  it('has the compiler refuse the same declarations (tsc checks these lines)', () => {
    const declare = (make: () => unknown) => make;
    declare(() => defineEndpoint({ routes: resource('GET', '/things', 'read_device'), needs: {}, openApi: operation, sample }));
    // @ts-expect-error a scoped resource route without its OpenAPI operation
    declare(() => defineEndpoint({ routes: resource('GET', '/things', 'read_device'), needs: {}, sample }));
    // @ts-expect-error an OpenAPI operation without a scoped resource route
    declare(() => defineEndpoint({ routes: [auth('GET', '/thing', 'page')], needs: {}, openApi: operation, sample }));
    // @ts-expect-error no needs
    declare(() => defineEndpoint({ routes: [auth('GET', '/thing', 'page')], sample }));
    // @ts-expect-error no sample
    declare(() => defineEndpoint({ routes: [auth('GET', '/thing', 'page')], needs: {} }));
    // @ts-expect-error two triggers
    declare(() => defineEndpoint({ routes: [auth('GET', '/thing', 'page')], schedule: 'rate(1 hour)', needs: {}, sample }));
    // @ts-expect-error no trigger
    declare(() => defineEndpoint({ needs: {}, sample }));
    // @ts-expect-error a method API Gateway routes but the table does not take
    declare(() => defineEndpoint({ routes: [auth('PATCH', '/thing', 'page')], needs: {}, sample }));
  });
});
