import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { provideEndpointTable, provideRecentSignInRoutes } from '#shared/config';
import type { BenchSpec } from '#shared/bench-floor';
import type { BundlingOptions, EndpointDeclaration, EventSourceKind, EndpointTable, FunctionNeeds, OpenApiOperation, SampleSpec } from '#shared/declaration';
import type { FunctionName, Route } from '#shared/routes';
import { DECLARATION_SUFFIX, declarationProblems } from '#functions/declaration-checks';

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
export { DECLARATION_SUFFIX };

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
