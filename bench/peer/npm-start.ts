import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceFacts } from '#local/service';
import { ROOT } from '../bundle.ts';
import { round } from '../stats.ts';
import { groupCpuMs, groupDelta } from './process-cpu.ts';

// `npm start` as a user runs it (the gateway, the example application, the webhook pipeline, the IoT
// stand-in and DynamoDB Local), in a process group of its own so that its CPU can be read whole and
// everything it started stopped with one signal. Its ports are free ones and its state is in a
// folder of the benchmark's; its output is read and dropped, as a terminal would show it.

export interface NpmStart {
  facts: ServiceFacts;
  /** The process group: npm, tsx, the service's Node process, esbuild's service and DynamoDB Local's Java. */
  pgid: number;
  stop(): Promise<void>;
}

/** Starts `npm start` with its state in `stateDir` and waits until it has written its facts (at most 3 minutes). */
export async function startNpmStart(stateDir: string): Promise<NpmStart> {
  // npm keeps a compile cache in the temporary folder; a measured run leaves nothing behind.
  const env: NodeJS.ProcessEnv = { ...process.env, API_PORT: '0', AUTH_PORT: '0', EXAMPLE_PORT: '0', STATE_DIR: stateDir, NODE_DISABLE_COMPILE_CACHE: '1' };
  delete env.DATA_DIR;
  const child = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pgid = child.pid!;
  let output = '';
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const killGroup = (signal: NodeJS.Signals) => {
    try { process.kill(-pgid, signal); } catch { /* already gone */ }
  };
  const killOnExit = () => killGroup('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    // Ctrl-C, as a user stops it: the terminal signals the whole group.
    killGroup('SIGINT');
    const deadline = Date.now() + 20_000;
    while (alive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(pgid)) killGroup('SIGKILL');
  };

  const factsFile = join(stateDir, 'service.json');
  const deadline = Date.now() + 180_000;
  while (!existsSync(factsFile)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start ${child.exitCode === null ? 'did not start within 3 minutes' : `exited (${child.exitCode})`}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // Written in one call: once it parses, it is whole.
  let facts: ServiceFacts | undefined;
  while (!facts) {
    try {
      facts = JSON.parse(readFileSync(factsFile, 'utf8')) as ServiceFacts;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { facts, pgid, stop };
}

/** Whether any process of group `pgid` is left. */
function alive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** CPU of a process group left alone: seconds used and share of one core, Node processes and DynamoDB Local apart. */
export interface IdleFigure {
  seconds: number;
  nodeCpuSeconds: number;
  dynamodbLocalCpuSeconds: number;
  /** (Node + Java CPU seconds) ÷ wall seconds × 100: percent of one core. */
  percentOfOneCore: number;
  nodePercent: number;
  dynamodbLocalPercent: number;
}

/** Most of one core the idle service may use, percent. */
export const IDLE_BUDGET_PERCENT = 2;

/** Reads the group's CPU over `seconds` in which nothing is asked of it; null without /proc. */
export async function measureIdle(pgid: number, seconds: number): Promise<IdleFigure | null> {
  const before = groupCpuMs(pgid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const used = groupDelta(before, groupCpuMs(pgid));
  if (!used) return null;
  const percent = (ms: number) => round((ms / 1000 / seconds) * 100, 2);
  return {
    seconds,
    nodeCpuSeconds: round(used.node / 1000, 2),
    dynamodbLocalCpuSeconds: round(used.java / 1000, 2),
    percentOfOneCore: percent(used.node + used.java),
    nodePercent: percent(used.node),
    dynamodbLocalPercent: percent(used.java),
  };
}
