import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiName, FunctionName } from '#shared/routes';

// In AWS every function runs in its own process under its own role; locally all handlers share one
// process. This keeps track of which function (reached through which route) a piece of work runs
// for, so that what it does (the AWS calls it makes) can be attributed to it and checked against
// the role that function has in AWS.

export interface Invocation {
  fn: FunctionName;
  /**
   * The API whose route invoked it, 'schedule' for a function an EventBridge rule invokes, 'stream'
   * or 'queue' for one an event source mapping invokes, 'iot' for one an IoT Core topic rule invokes.
   */
  api: ApiName | 'schedule' | 'stream' | 'queue' | 'iot';
  /** API Gateway's route key that matched (`GET /user`, `ANY /user`, `$default`), or the schedule expression. */
  routeKey: string;
}

const running = new AsyncLocalStorage<Invocation>();
const counts = new Map<string, Invocation & { count: number }>();

const ended = new Set<() => void>();

/** Runs `work` as an invocation; everything it awaits is attributed to it. */
export function runAsFunction<T>(invocation: Invocation, work: () => T): T {
  const id = `${invocation.api} ${invocation.routeKey}`;
  const seen = counts.get(id) ?? { ...invocation, count: 0 };
  seen.count += 1;
  counts.set(id, seen);
  const result = running.run(invocation, work);
  if (ended.size > 0) {
    const tell = () => {
      for (const listener of ended) listener();
    };
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') (result as PromiseLike<unknown>).then(tell, tell);
    else tell();
  }
  return result;
}

/**
 * Calls `listener` whenever an invocation in this process ends (it may have written to the table: the
 * local stream readers read again soon). Returns what stops it.
 */
export function afterEveryInvocation(listener: () => void): () => void {
  ended.add(listener);
  return () => ended.delete(listener);
}

/** The invocation the current work runs for, if any. */
export function currentInvocation(): Invocation | undefined {
  return running.getStore();
}

/** Every route invoked in this process, with how often. */
export function invocationCounts(): (Invocation & { count: number })[] {
  return [...counts.values()].map((seen) => ({ ...seen }));
}
