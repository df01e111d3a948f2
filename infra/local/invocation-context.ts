import { AsyncLocalStorage } from 'node:async_hooks';
import type { FunctionName } from '#infra/routes';

// In AWS every function runs in its own process under its own role; locally all handlers share one
// process. This keeps track of which function a piece of work runs for, so that what a function does
// (the AWS calls it makes) can be attributed to it and checked against that function's role.
const running = new AsyncLocalStorage<FunctionName>();
const invocations = new Map<FunctionName, number>();

/** Runs `work` as an invocation of `fn`; everything it awaits is attributed to `fn`. */
export function runAsFunction<T>(fn: FunctionName, work: () => T): T {
  invocations.set(fn, (invocations.get(fn) ?? 0) + 1);
  return running.run(fn, work);
}

/** The function the current work runs for, if any. */
export function currentFunction(): FunctionName | undefined {
  return running.getStore();
}

/** How often each function has been invoked in this process. */
export function invocationCounts(): ReadonlyMap<FunctionName, number> {
  return invocations;
}
