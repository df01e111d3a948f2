import { parseCommandLine, usageError } from '#local/cli';
import { isFunctionName, type FunctionName } from '#functions/registry';
import type { AsUsersOptions } from './peer/as-users.ts';
import type { PeerOptions } from './peer/compare.ts';

/** How much each phase measures. `--quick` runs the same code with small counts (CI). */
export interface BenchOptions {
  quick: boolean;
  /** Report failed budgets without failing the run (exit status 0); CI's quick run, whose figures are noise. */
  informational: boolean;
  /** Fresh Node processes per bundle (cold start); the median is reported. */
  coldRuns: number;
  /** In-process calls before measuring, per scenario (JIT, connection pool, caches). */
  warmupCalls: number;
  /** Measured in-process calls per scenario (each interleaved with one bare DynamoDB call). */
  warmCalls: number;
  /**
   * Measured calls of the scenarios whose p50 and p99 carry a budget (the resource endpoints): a
   * p99 is the 1 % tail, and on a shared machine it needs many calls to be stable (with 2,000 calls
   * get-device's p99 ratio ranged 0.88–1.44 over four full runs).
   */
  warmCallsBudgeted: number;
  /** Cap on the measured time of one scenario (scrypt-bound login is slow by design). */
  warmSecondsCap: number;
  /** Token endpoint throughput: calls per concurrency level, and the levels. */
  throughputCalls: number;
  concurrency: readonly number[];
  /** Iterations of the client-authentication and signing micro-benchmarks. */
  clientAuthIterations: number;
  signIterations: number;
  /** `--peer`: only the comparison with the peer (oidc-provider); the full and quick runs include it too. */
  peerOnly: boolean;
  /**
   * `--functions a,b`: only these functions (with their floors and the baseline), without the token
   * endpoint's throughput, the HTTP-shim comparison and the peer; undefined: every function.
   */
  functions?: readonly FunctionName[];
  /** Ours against the peer: calls per server per round, alternating rounds, warm-up calls, concurrent clients. */
  peer: PeerOptions;
  /** `--peer --as-users`: ours through `npm start` against the peer beside it, and `npm start`'s idle CPU (bench/peer/as-users.ts). */
  asUsers?: AsUsersOptions;
}

export const BENCH_USAGE = `Usage: npm run bench [-- --quick] [--informational] [--peer [--as-users] | --functions <name,…>]
Measures every function of the route table against references of the same run, and our token
endpoint against the peer (oidc-provider) over HTTP; prints tables and writes bench-results.json
(bench/RESULTS.md). Exits 1 when a budget fails.
  --quick           small counts: checks that the benchmark runs; its figures are noise
  --informational   report failed budgets without failing (exit 0), as CI runs the quick mode
  --peer            only the comparison with the peer (needs: npm install --save-dev oidc-provider)
  --as-users        with --peer: ours as users run it (npm start, the peer beside it on the same
                    DynamoDB Local), and npm start's CPU left alone before and after the rounds
  --functions       only these functions of the route table (comma-separated), their floors and the
                    baseline: no token endpoint throughput, HTTP-shim comparison or peer`;

/** The command line's options (`--help` prints the usage and exits 0, an unknown flag exits 2). */
export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseCommandLine({ name: 'bench', usage: BENCH_USAGE }, {
    args: argv,
    options: {
      quick: { type: 'boolean', default: false }, informational: { type: 'boolean', default: false }, peer: { type: 'boolean', default: false },
      functions: { type: 'string' }, 'as-users': { type: 'boolean', default: false },
    },
  });
  const { quick, informational, peer: peerOnly } = values;
  const tool = { name: 'bench', usage: BENCH_USAGE };
  let functions: FunctionName[] | undefined;
  if (values['as-users'] && !peerOnly) usageError(tool, '--as-users goes with --peer');
  const asUsers: AsUsersOptions | undefined = !values['as-users'] ? undefined : quick
    // Quick: it shows the mode still runs; its figures are noise.
    ? { settleSeconds: 2, idleSeconds: 5, calls: 32, rounds: 2, warmup: 16, initialWarmup: 0, refreshChains: [2, 16], exchangeClients: [2, 8] }
    // Full: idle over a minute after 20 s of settling (DynamoDB Local's JIT ends its start-up work),
    // the peer comparison's counts.
    : { settleSeconds: 20, idleSeconds: 60, calls: 400, rounds: 8, warmup: 400, initialWarmup: 3000, refreshChains: [2, 16], exchangeClients: [2, 8] };
  if (values.functions !== undefined) {
    if (peerOnly) usageError(tool, '--functions and --peer cannot be combined');
    functions = values.functions.split(',').map((name) => name.trim()).filter((name) => name !== '');
    const unknown = functions.filter((name) => !isFunctionName(name));
    if (functions.length === 0 || unknown.length > 0) usageError(tool, `--functions: no function named ${unknown.join(', ') || '(none given)'} (functions/<area>/<name>.route.ts)`);
  }
  return quick
    ? {
        quick, informational, functions, coldRuns: 3, warmupCalls: 20, warmCalls: 100, warmCallsBudgeted: 100, warmSecondsCap: 3,
        throughputCalls: 40, concurrency: [1, 8], clientAuthIterations: 20_000, signIterations: 20,
        // A tiny peer round: it shows the comparison still runs (CI), in about half a minute.
        peerOnly, peer: { calls: 30, rounds: 2, warmup: 10, initialWarmup: 0, concurrency: [2, 16] }, asUsers,
      }
    : {
        quick, informational, functions, coldRuns: 31, warmupCalls: 200, warmCalls: 2000, warmCallsBudgeted: 10_000, warmSecondsCap: 30,
        throughputCalls: 1000, concurrency: [1, 4, 16], clientAuthIterations: 200_000, signIterations: 500,
        // The warm-up is a round's worth per server and scenario, after 3,000 calls of each grant per
        // server: with 50 and then 400 calls, DynamoDB Local (Java) was still compiling the request paths
        // and the first scenario's rounds ran at half the speed of its last. Eight rounds: the rounds
        // of one scenario and server still differ by up to 1.5× on this machine.
        peerOnly, peer: { calls: 400, rounds: 8, warmup: 400, initialWarmup: 3000, concurrency: [2, 16] }, asUsers,
      };
}
