import type { DocumentClient } from '#shared/data/document-client';
import { countRequests } from '../test/support/count-requests.ts';
import { benchContext } from './events.ts';
import { unexpectedAnswer, type Handler, type Scenario } from './scenarios.ts';
import { percentile } from './stats.ts';

export interface WarmResult {
  name: string;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  /** The HTTP status of the calls; null for a function without an HTTP route. */
  status: number | null;
  /** DynamoDB requests per measured call, and the operations of one call. */
  requestsPerCall: number;
  operations: string[];
  /** Process CPU (user + system) per measured call: robust to other load, unlike latency. */
  cpuMsPerCall: number;
  bare?: { label: string; calls: number; p50Ms: number; p99Ms: number; cpuMsPerCall: number };
}

/** Counts every DynamoDB request the functions' runtime clients send (and those of clients `add`ed later). */
export function attachCounters(clients: readonly DocumentClient[]) {
  const counters = clients.map((doc) => countRequests(doc));
  return {
    /** Counts a client's requests from now on too (its stack is the document client's: any DynamoDB client will do). */
    add(client: Pick<DocumentClient, 'middlewareStack'>) {
      counters.push(countRequests(client as DocumentClient));
    },
    get total() {
      return counters.reduce((sum, c) => sum + c.total, 0);
    },
    /** Each client's count so far, to pass to `since`. */
    snapshot: () => counters.map((c) => c.total),
    /** Operation names sent since `snapshot` was taken. */
    since: (snapshot: number[]) => counters.flatMap((c, i) => c.operations.slice(snapshot[i])),
    reset: () => counters.forEach((c) => c.reset()),
  };
}

export type Counters = ReturnType<typeof attachCounters>;

/**
 * Calls the handler in this process, `warmup` times and then `calls` times (or until the time cap),
 * each call next to one bare call of the same DynamoDB request kinds, alternating which goes first,
 * so that both series see the same machine. Events and bare calls are prepared before timing.
 */
export async function measureWarm(
  scenario: Scenario,
  handler: Handler,
  counters: Counters,
  opts: { warmup: number; calls: number; secondsCap: number },
): Promise<WarmResult> {
  const total = opts.warmup + opts.calls;
  const events = await scenario.events(total);
  const bare = scenario.bare ? await scenario.bare.prepare(total) : undefined;
  const context = benchContext(scenario.fn);
  const times: number[] = [];
  const bareTimes: number[] = [];
  let requests = 0;
  let operations: string[] = [];
  let status: number | null = null;
  let measuredSince = 0;
  let cpu = 0;
  let bareCpu = 0;
  const cpuSince = (start: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };

  const callHandler = async (i: number, measured: boolean) => {
    const before = counters.snapshot();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const response = await handler(events[i]!, context);
    const elapsed = performance.now() - t0;
    const used = cpuSince(c0);
    status = response.statusCode ?? null;
    const unexpected = unexpectedAnswer(scenario, response);
    if (unexpected) throw new Error(`${scenario.name}: ${unexpected}`);
    const sent = counters.since(before);
    if (measured) {
      times.push(elapsed);
      cpu += used;
      requests += sent.length;
      if (times.length === 1) operations = sent;
    }
  };
  const callBare = async (i: number, measured: boolean) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await bare![i]!();
    const elapsed = performance.now() - t0;
    const used = cpuSince(c0);
    if (measured) {
      bareTimes.push(elapsed);
      bareCpu += used;
    }
  };

  const started = performance.now();
  for (let i = 0; i < total; i++) {
    // Warm-up, too, stops at a quarter of the cap (each scrypt login costs tens of milliseconds).
    if (i < opts.warmup && i > 0 && performance.now() - started > opts.secondsCap * 250) i = opts.warmup;
    const measured = i >= opts.warmup;
    if (measured && measuredSince === 0) measuredSince = performance.now();
    if (bare && i % 2 === 1) await callBare(i, measured);
    await callHandler(i, measured);
    if (bare && i % 2 === 0) await callBare(i, measured);
    if (measured && performance.now() - measuredSince > opts.secondsCap * 1000) break;
  }
  return {
    name: scenario.name,
    calls: times.length,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    status,
    requestsPerCall: requests / times.length,
    operations: operations.map((op) => op.replace(/Command$/, '')),
    cpuMsPerCall: cpu / times.length,
    ...(scenario.bare
      ? { bare: { label: scenario.bare.label, calls: bareTimes.length, p50Ms: percentile(bareTimes, 50), p99Ms: percentile(bareTimes, 99), cpuMsPerCall: bareCpu / bareTimes.length } }
      : {}),
  };
}
