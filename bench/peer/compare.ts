import { DEMO_CLIENT } from '#local/seed';
import { percentile, round } from '../stats.ts';
import { drive } from './driver.ts';
import { processCpuMs } from './process-cpu.ts';
import type { Minted, ServerStats } from './protocol.ts';
import { peerPackage, peerVersion, startServer, type RunningServer } from './servers.ts';
import { SERVER_ENV } from './protocol.ts';

// Ours against the peer (oidc-provider), both over HTTP on loopback, driven by the same closed-loop
// load generator, in alternating rounds (ours first in even rounds, the peer first in odd ones) so
// that a busy moment of the shared machine falls on both. Grants are made before each round through
// each server's own models (the peer's AuthorizationCode/RefreshToken/Grant, our grant repository),
// never inside the timing. Method and schema: bench/RESULTS.md, "Ours against the peer".

export type Grant = 'refresh_token' | 'authorization_code';
export const GRANTS: readonly Grant[] = ['refresh_token', 'authorization_code'];

export interface PeerOptions {
  /** Calls per server per round, rounds per (grant, concurrency), and the warm-up calls per server and scenario. */
  calls: number;
  rounds: number;
  warmup: number;
  /**
   * Calls per server and grant before the first scenario, at the highest concurrency: DynamoDB Local
   * (Java) reaches its steady speed only after a few thousand requests of each kind.
   */
  initialWarmup: number;
  concurrency: readonly number[];
}

export interface SideFigures {
  calls: number;
  seconds: number;
  requestsPerSecond: number;
  /** Each round's requests per second, in round order: the spread within the run. */
  roundsRequestsPerSecond: number[];
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  dynamodbRequestsPerCall: number;
  /** DynamoDB requests per call by operation. */
  operations: Record<string, number>;
  /** Milliseconds per call the server waited for DynamoDB, by operation (concurrent requests of one call both count). */
  dynamodbMsPerCall: Record<string, number>;
  /** Process CPU of the server per call (the load generator and DynamoDB Local excluded). */
  serverCpuMsPerCall: number;
  /** CPU of DynamoDB Local (its Java process) per call during this server's rounds; null where /proc is not there. */
  dynamodbLocalCpuMsPerCall: number | null;
  /** Calls answered with anything but 200 and two tokens (a timeout of the 1 s DynamoDB limit under load, say). */
  errors: number;
  firstError: string | null;
}

export interface PeerScenario {
  grant: Grant;
  concurrency: number;
  ours: SideFigures;
  peer: SideFigures;
  /** Ours ÷ peer: throughput above 1 is better for us; latencies, requests and CPU below 1 are. */
  ratios: { throughput: number; p50: number; p99: number; dynamodbRequests: number; serverCpu: number };
  /** The goal: throughput ≥ 1.5× the peer's, p99 no worse, fewer DynamoDB requests per call. */
  goal: { throughput: boolean; p99: boolean; requests: boolean; met: boolean };
}

export interface PeerComparison {
  package: string;
  version: string;
  counts: PeerOptions;
  scenarios: PeerScenario[];
  /** Latencies of every measured call, for the plot (not written to JSON). */
  samples: { grant: Grant; concurrency: number; ours: number[]; peer: number[] }[];
}

export const GOAL = { throughputRatio: 1.5, p99Ratio: 1 } as const;

export interface PeerEnvironment {
  endpoint: string;
  /** DynamoDB Local's process, whose CPU each round reads from /proc (Linux). */
  dynamodbPid?: number;
  table: string;
  keyFile: string;
  audience: string;
}

/**
 * Starts both servers (the peer only if installed: PeerMissingError otherwise, before anything
 * starts), measures, and stops them whatever happens.
 */
export async function comparePeer(environment: PeerEnvironment, options: PeerOptions, progress: (message: string) => void): Promise<PeerComparison> {
  const version = peerVersion();
  const env = {
    [SERVER_ENV.endpoint]: environment.endpoint,
    [SERVER_ENV.table]: environment.table,
    [SERVER_ENV.keyFile]: environment.keyFile,
    [SERVER_ENV.audience]: environment.audience,
  };
  const servers: RunningServer[] = [];
  try {
    progress(`peer: starting our token endpoint and ${peerPackage()} ${version}`);
    // One at a time: a failed start of the second stops the first (finally, below).
    servers.push(await startServer('ours', { ...env, [SERVER_ENV.port]: '0' }));
    servers.push(await startServer('peer', env));
    const [ours, peer] = servers as [RunningServer, RunningServer];
    const scenarios: PeerScenario[] = [];
    const samples: PeerComparison['samples'] = [];
    if (options.initialWarmup > 0) {
      progress(`peer: warming up (${options.initialWarmup} calls of each grant per server)`);
      for (const grant of GRANTS) {
        for (const server of [ours, peer]) await runRound(server, grant, options.initialWarmup, Math.max(...options.concurrency), environment.dynamodbPid);
      }
    }
    for (const grant of GRANTS) {
      for (const concurrency of options.concurrency) {
        progress(`peer: ${grant} at ${concurrency} concurrent clients (${options.rounds} rounds of ${options.calls} calls each)`);
        const runs = { ours: [] as Round[], peer: [] as Round[] };
        // Warm-up: JIT, connection pools, caches (our signing-key schedule, the peer's keystore).
        for (const server of [ours, peer]) await runRound(server, grant, options.warmup, concurrency, environment.dynamodbPid);
        for (let r = 0; r < options.rounds; r++) {
          for (const server of r % 2 === 0 ? [ours, peer] : [peer, ours]) {
            runs[server.name].push(await runRound(server, grant, options.calls, concurrency, environment.dynamodbPid));
          }
        }
        const o = figures(runs.ours);
        const p = figures(runs.peer);
        for (const [side, f] of [['ours', o], ['peer', p]] as const) {
          if (f.errors > MAX_ERROR_SHARE * f.calls) throw new Error(`${side}: ${f.errors} of ${f.calls} ${grant} calls failed; first: ${f.firstError}`);
        }
        const ratios = {
          throughput: o.requestsPerSecond / p.requestsPerSecond, p50: o.p50Ms / p.p50Ms, p99: o.p99Ms / p.p99Ms,
          dynamodbRequests: o.dynamodbRequestsPerCall / p.dynamodbRequestsPerCall, serverCpu: o.serverCpuMsPerCall / p.serverCpuMsPerCall,
        };
        const goal = {
          throughput: ratios.throughput >= GOAL.throughputRatio, p99: ratios.p99 <= GOAL.p99Ratio, requests: ratios.dynamodbRequests < 1,
        };
        scenarios.push({
          grant, concurrency, ours: o, peer: p,
          ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round(v, 3)])) as PeerScenario['ratios'],
          goal: { ...goal, met: goal.throughput && goal.p99 && goal.requests },
        });
        samples.push({ grant, concurrency, ours: runs.ours.flatMap((x) => x.latenciesMs), peer: runs.peer.flatMap((x) => x.latenciesMs) });
      }
    }
    return { package: peerPackage(), version, counts: options, scenarios, samples };
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
}

/** More failed calls than this share of a (grant, concurrency) ends the run: the figures would mean little. */
export const MAX_ERROR_SHARE = 0.01;

export interface Round {
  errors: number;
  firstError?: string;
  calls: number;
  seconds: number;
  latenciesMs: number[];
  requests: number;
  operations: Record<string, number>;
  operationsMs: Record<string, number>;
  cpuMs: number;
  dynamodbLocalCpuMs: number | null;
}

/** One round on one server: grants made first (untimed), then the calls, counters read around them. */
async function runRound(server: RunningServer, grant: Grant, calls: number, concurrency: number, dynamodbPid?: number): Promise<Round> {
  const minted = await server.mint(grant === 'refresh_token' ? 'refresh' : 'code', calls);
  const bodies = minted.map((m) => formBody(grant, m));
  const before = await server.stats();
  const javaBefore = processCpuMs(dynamodbPid);
  const load = await drive({ url: server.url, path: server.tokenPath }, bodies, concurrency);
  const javaAfter = processCpuMs(dynamodbPid);
  const after = await server.stats();
  return { ...load, ...delta(before, after), dynamodbLocalCpuMs: javaBefore === null || javaAfter === null ? null : javaAfter - javaBefore };
}

/** The token request of `grant` for a minted code or refresh token (the demo client's credentials in the body). */
export function formBody(grant: Grant, minted: Minted): string {
  const client = { client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret };
  return new URLSearchParams(grant === 'refresh_token'
    ? { grant_type: 'refresh_token', refresh_token: minted.value, ...client }
    : {
        grant_type: 'authorization_code', code: minted.value, redirect_uri: DEMO_CLIENT.redirectUris[0], code_verifier: minted.codeVerifier!, ...client,
      }).toString();
}

function delta(before: ServerStats, after: ServerStats) {
  const diff = (a: Record<string, number>, b: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const [op, n] of Object.entries(a)) {
      const d = n - (b[op] ?? 0);
      if (d) out[op] = d;
    }
    return out;
  };
  return {
    requests: after.requests - before.requests, operations: diff(after.operations, before.operations),
    operationsMs: diff(after.operationsMs, before.operationsMs), cpuMs: after.cpuMs - before.cpuMs,
  };
}

/** One side's figures over its rounds. */
export function figures(rounds: readonly Round[]): SideFigures {
  const calls = rounds.reduce((s, r) => s + r.calls, 0);
  const seconds = rounds.reduce((s, r) => s + r.seconds, 0);
  const latencies = rounds.flatMap((r) => r.latenciesMs);
  const sum = (pick: (r: Round) => Record<string, number>) => {
    const totals: Record<string, number> = {};
    for (const r of rounds) for (const [op, n] of Object.entries(pick(r))) totals[op] = (totals[op] ?? 0) + n;
    return Object.fromEntries(Object.entries(totals).sort().map(([op, n]) => [op.replace(/Command$/, ''), round(n / calls, 3)]));
  };
  return {
    calls,
    seconds: round(seconds, 3),
    requestsPerSecond: round(calls / seconds, 1),
    roundsRequestsPerSecond: rounds.map((r) => round(r.calls / r.seconds, 1)),
    p50Ms: round(percentile(latencies, 50), 3),
    p90Ms: round(percentile(latencies, 90), 3),
    p99Ms: round(percentile(latencies, 99), 3),
    maxMs: round(Math.max(...latencies), 3),
    dynamodbRequestsPerCall: round(rounds.reduce((s, r) => s + r.requests, 0) / calls, 3),
    operations: sum((r) => r.operations),
    dynamodbMsPerCall: sum((r) => r.operationsMs),
    serverCpuMsPerCall: round(rounds.reduce((s, r) => s + r.cpuMs, 0) / calls, 3),
    dynamodbLocalCpuMsPerCall: rounds.some((r) => r.dynamodbLocalCpuMs === null) ? null : round(rounds.reduce((s, r) => s + r.dynamodbLocalCpuMs!, 0) / calls, 3),
    errors: rounds.reduce((s, r) => s + r.errors, 0),
    firstError: rounds.find((r) => r.firstError)?.firstError ?? null,
  };
}
