import { join } from 'node:path';
import { createLocalSigner } from '#shared/keys/local-signer';
import { round } from '../stats.ts';
import { GOAL, MAX_ERROR_SHARE, figures, formBody, type Grant, type Round, type SideFigures } from './compare.ts';
import { drive, driveChains, type LoadResult } from './driver.ts';
import { createMinter, type Minter } from './mint.ts';
import { measureIdle, startNpmStart, type IdleFigure, type NpmStart } from './npm-start.ts';
import { groupCpuMs, processCpuMs } from './process-cpu.ts';
import { SERVER_ENV } from './protocol.ts';
import { peerPackage, peerVersion, startServer, type RunningServer } from './servers.ts';

// Ours as users run it against the peer: `npm start` (the gateway, the example application, the
// webhook pipeline and IoT stand-in beside the token endpoint, DynamoDB Local) and oidc-provider
// beside it on the same DynamoDB Local and table, in alternating rounds. A refresh scenario is N
// chains (each client rotates its own token with the token the previous answer gave); an exchange
// scenario is N clients redeeming fresh codes (made before each round, untimed). CPU per call is
// read from /proc for each process group: `npm start`'s Node processes (the gateway and all it
// runs), DynamoDB Local (its Java process, in the same group), the peer's process. The service is
// also left alone for a while before the rounds and after them: its idle CPU.

export interface AsUsersOptions {
  /** Seconds between the start (or the last round) and the idle measurement, and the seconds measured. */
  settleSeconds: number;
  idleSeconds: number;
  /** Calls per server per round, rounds per scenario, warm-up calls per server and scenario, and before the first scenario per grant. */
  calls: number;
  rounds: number;
  warmup: number;
  initialWarmup: number;
  /** Concurrent chains of refreshes, and concurrent clients of code exchanges. */
  refreshChains: readonly number[];
  exchangeClients: readonly number[];
}

export type AsUsersFigures = Pick<SideFigures,
  'calls' | 'seconds' | 'requestsPerSecond' | 'roundsRequestsPerSecond' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'maxMs' | 'errors' | 'firstError'> & {
  /** CPU per call of the server's process group: `npm start`'s Node processes for ours, the peer's process for the peer. */
  serverCpuMsPerCall: number | null;
  /** CPU per call of DynamoDB Local during this side's rounds. */
  dynamodbLocalCpuMsPerCall: number | null;
};

export interface AsUsersScenario {
  grant: Grant;
  concurrency: number;
  ours: AsUsersFigures;
  peer: AsUsersFigures;
  ratios: { throughput: number; p50: number; p99: number };
  goal: { throughput: boolean; p99: boolean; met: boolean };
}

export interface AsUsersComparison {
  package: string;
  version: string;
  counts: AsUsersOptions;
  idle: { before: IdleFigure | null; after: IdleFigure | null };
  scenarios: AsUsersScenario[];
}

/** One side: how to reach its token endpoint, make its grants and read its CPU. */
interface Side {
  name: 'ours' | 'peer';
  url: string;
  tokenPath: string;
  mint(kind: 'code' | 'refresh', count: number): Promise<{ value: string; codeVerifier?: string }[]>;
  /** CPU so far of the server's processes and of DynamoDB Local, ms. */
  cpu(): { server: number | null; dynamodb: number | null };
  /** Each refresh chain's current token, by concurrency. */
  chains: Map<number, (string | undefined)[]>;
}

/** Starts `npm start` and the peer beside it, measures, and stops both whatever happens. */
export async function compareAsUsers(stateDir: string, options: AsUsersOptions, progress: (message: string) => void): Promise<AsUsersComparison> {
  const version = peerVersion();
  let service: NpmStart | undefined;
  let peer: RunningServer | undefined;
  let minter: Minter | undefined;
  try {
    progress('peer as users run it: starting npm start (ports of its own, state in a temporary folder)');
    service = await startNpmStart(join(stateDir, 'npm-start'));
    const { facts, pgid } = service;
    progress(`npm start is up; settling ${options.settleSeconds} s, then ${options.idleSeconds} s left alone`);
    await new Promise((r) => setTimeout(r, options.settleSeconds * 1000));
    const idleBefore = await measureIdle(pgid, options.idleSeconds);
    progress(`idle before: ${idleBefore ? `${idleBefore.percentOfOneCore} % of one core` : 'no /proc'}`);

    // The peer signs with a key of its own of the same kind (RS256, from the same local signer).
    const peerKey = join(stateDir, 'peer-signing-key.pem');
    createLocalSigner(peerKey);
    peer = await startServer('peer', {
      [SERVER_ENV.endpoint]: facts.dynamodbEndpoint, [SERVER_ENV.table]: facts.tableName,
      [SERVER_ENV.keyFile]: peerKey, [SERVER_ENV.audience]: facts.apiUrl,
    });
    minter = await createMinter(facts.dynamodbEndpoint, facts.tableName);
    const java = () => groupCpuMs(pgid)?.java ?? null;
    const ours: Side = {
      name: 'ours', url: facts.authUrl, tokenPath: '/oauth/token', mint: minter.mint, chains: new Map(),
      cpu: () => {
        const group = groupCpuMs(pgid);
        return { server: group?.node ?? null, dynamodb: group?.java ?? null };
      },
    };
    const running = peer;
    const theirs: Side = {
      name: 'peer', url: running.url, tokenPath: running.tokenPath, mint: running.mint, chains: new Map(),
      cpu: () => ({ server: processCpuMs(running.pid), dynamodb: java() }),
    };

    const scenarios: AsUsersScenario[] = [];
    const plan: [Grant, readonly number[]][] = [['refresh_token', options.refreshChains], ['authorization_code', options.exchangeClients]];
    if (options.initialWarmup > 0) {
      progress(`peer as users: warming up (${options.initialWarmup} calls of each grant per server)`);
      for (const [grant, levels] of plan) for (const side of [ours, theirs]) await runRound(side, grant, options.initialWarmup, Math.max(...levels));
    }
    for (const [grant, levels] of plan) {
      for (const concurrency of levels) {
        progress(`peer as users: ${grant} at ${concurrency} ${grant === 'refresh_token' ? 'chains' : 'clients'} (${options.rounds} rounds of ${options.calls} calls each)`);
        for (const side of [ours, theirs]) await runRound(side, grant, options.warmup, concurrency);
        const runs = { ours: [] as Round[], peer: [] as Round[] };
        for (let r = 0; r < options.rounds; r++) {
          for (const side of r % 2 === 0 ? [ours, theirs] : [theirs, ours]) runs[side.name].push(await runRound(side, grant, options.calls, concurrency));
        }
        const o = sideFigures(runs.ours);
        const p = sideFigures(runs.peer);
        for (const [name, f] of [['ours', o], ['peer', p]] as const) {
          if (f.errors > MAX_ERROR_SHARE * f.calls) throw new Error(`${name}: ${f.errors} of ${f.calls} ${grant} calls failed; first: ${f.firstError}`);
        }
        const ratios = { throughput: round(o.requestsPerSecond / p.requestsPerSecond, 3), p50: round(o.p50Ms / p.p50Ms, 3), p99: round(o.p99Ms / p.p99Ms, 3) };
        const goal = { throughput: ratios.throughput >= GOAL.throughputRatio, p99: ratios.p99 <= GOAL.p99Ratio };
        scenarios.push({ grant, concurrency, ours: o, peer: p, ratios, goal: { ...goal, met: goal.throughput && goal.p99 } });
      }
    }
    await peer.stop();
    peer = undefined;
    progress(`peer as users: rounds done; settling ${options.settleSeconds} s, then ${options.idleSeconds} s left alone`);
    await new Promise((r) => setTimeout(r, options.settleSeconds * 1000));
    const idleAfter = await measureIdle(pgid, options.idleSeconds);
    return { package: peerPackage(), version, counts: options, idle: { before: idleBefore, after: idleAfter }, scenarios };
  } finally {
    minter?.stop();
    await peer?.stop();
    await service?.stop();
  }
}

/** One round on one side: grants made first (untimed), then the calls, CPU read around them. */
async function runRound(side: Side, grant: Grant, calls: number, concurrency: number): Promise<Round> {
  let load: LoadResult;
  let before: ReturnType<Side['cpu']>;
  if (grant === 'refresh_token') {
    const chains = side.chains.get(concurrency) ?? [];
    const broken = Array.from({ length: concurrency }, (_, i) => i).filter((i) => chains[i] === undefined);
    const fresh = await side.mint('refresh', broken.length);
    broken.forEach((chain, i) => { chains[chain] = fresh[i]!.value; });
    before = side.cpu();
    const result = await driveChains({ url: side.url, path: side.tokenPath }, chains as string[], Math.ceil(calls / concurrency), (token) => formBody(grant, { value: token }));
    side.chains.set(concurrency, result.lastTokens);
    load = result;
  } else {
    const bodies = (await side.mint('code', calls)).map((minted) => formBody(grant, minted));
    before = side.cpu();
    load = await drive({ url: side.url, path: side.tokenPath }, bodies, concurrency);
  }
  const after = side.cpu();
  const used = (pick: 'server' | 'dynamodb') => (before[pick] === null || after[pick] === null ? null : after[pick]! - before[pick]!);
  return {
    ...load, requests: 0, operations: {}, operationsMs: {},
    cpuMs: used('server') ?? Number.NaN, dynamodbLocalCpuMs: used('dynamodb'),
  };
}

function sideFigures(rounds: readonly Round[]): AsUsersFigures {
  const f = figures(rounds);
  return {
    calls: f.calls, seconds: f.seconds, requestsPerSecond: f.requestsPerSecond, roundsRequestsPerSecond: f.roundsRequestsPerSecond,
    p50Ms: f.p50Ms, p90Ms: f.p90Ms, p99Ms: f.p99Ms, maxMs: f.maxMs, errors: f.errors, firstError: f.firstError,
    serverCpuMsPerCall: Number.isFinite(f.serverCpuMsPerCall) ? f.serverCpuMsPerCall : null,
    dynamodbLocalCpuMsPerCall: f.dynamodbLocalCpuMsPerCall,
  };
}
