import { endpointOf, FALLBACK_FUNCTION, FUNCTIONS, ROUTES, type FunctionName } from '#functions/registry';

// Which functions `npm run bench` measures, and how each is reached. Kept apart from bench/run.ts
// (a script) and bench/scenarios.ts (which loads the handlers' runtime), so that a unit test can
// hold the list against the handler files on disk (test/unit/bench-coverage.test.ts).

/**
 * Every declared function (functions/registry.ts), in the order of their declaration files: each gets a bundle budget, a cold-start budget
 * (unless it is local only) and warm figures. Those without an HTTP route (the scheduled signing-key
 * rotation, the webhook pipeline's stream and queue functions) included: they are invoked with the
 * event their trigger sends (bench/scenarios.ts).
 */
export const BENCHED: readonly FunctionName[] = Object.keys(FUNCTIONS);

const RESOURCE_FUNCTIONS = new Set<FunctionName>(ROUTES.filter((r) => r.api === 'resource').map((r) => r.fn));

/** The functions serving the resource API (the warm budgets and the tighter bundle budget are theirs). */
export const isResourceFunction = (fn: FunctionName) => RESOURCE_FUNCTIONS.has(fn);

/** Where a function's calls come from: `none` for a function without an HTTP route. */
export function apiOf(fn: FunctionName): 'resource' | 'auth' | 'both' | 'none' {
  if (fn === FALLBACK_FUNCTION) return 'both';
  if (RESOURCE_FUNCTIONS.has(fn)) return 'resource';
  return ROUTES.some((r) => r.fn === fn) ? 'auth' : 'none';
}

/** What invokes a function without an HTTP route: its schedule expression or its event source; undefined for the others. */
export function triggerOf(fn: FunctionName): string | undefined {
  const def = endpointOf(fn);
  return def.schedule ? `schedule ${def.schedule}` : def.eventSource;
}
