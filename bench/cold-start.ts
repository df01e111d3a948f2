import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median, percentile, shuffle } from './stats.ts';

const DRIVER = join(import.meta.dirname, 'cold-start-driver.mjs');
const MARKER = '@@cold-start@@';

export interface ColdStartTarget {
  name: string;
  bundleFile: string;
  /** One event file per run (a run may consume a code, token or session); with `beforeRun`, written just before it. */
  eventFiles: string[];
  /** Environment of the function, as the stack sets it (locally: DynamoDB Local, key file). */
  env: Record<string, string>;
  /** Untimed, before each run with `eventFile`: writes that file's event fresh. */
  beforeRun?: (eventFile: string) => Promise<void>;
  /**
   * Targets of one group run back to back in each round (in a random order within the group), so
   * that a function and its floor see the same moment of a shared machine.
   */
  group?: string;
  /**
   * Not a bundle: a bare Node start (`node -e` reporting `performance.now()` at its first
   * statement), the reference of the old-path comparison (bench/cold-start-old-path.ts).
   */
  bareNode?: boolean;
}

interface ProbeResult {
  totalMs: number;
  bootMs: number;
  importMs: number;
  firstCallMs: number;
  cpuMs: number;
  status?: number;
  /** The result of a function without an HTTP route (no status). */
  result?: unknown;
  socketsAtLoad: string[];
  keyFileReadAtLoad: boolean;
}

export interface ColdStartResult {
  name: string;
  runs: number;
  medianMs: number;
  p10Ms: number;
  p90Ms: number;
  medianImportMs: number;
  medianFirstCallMs: number;
  medianBootMs: number;
  /** Process CPU time (user + system) from start to the first response. */
  medianCpuMs: number;
  /** Per round, in round order: time to the first response and process CPU (for paired ratios). */
  totalsMs: number[];
  cpusMs: number[];
  statuses: number[];
  /** Per round: the result of a function without an HTTP route, else undefined. */
  results: unknown[];
  /** Sockets opened (or being opened) before the first event: must be none. */
  socketsAtLoad: string[];
  /** The local stand-in of the KMS key was read at module load (AWS: no key material is ever fetched). */
  keyFileReadAtLoad: boolean;
}

/**
 * Runs every target `runs` times in fresh Node processes, one process at a time, in a new random
 * order each round, so that drift on a shared machine spreads evenly over all targets; the targets
 * of a group run back to back.
 */
export async function measureColdStarts(targets: readonly ColdStartTarget[], runs: number, progress: (done: number, total: number) => void): Promise<Map<string, ColdStartResult>> {
  const samples = new Map<string, ProbeResult[]>(targets.map((t) => [t.name, []]));
  const groups = new Map<string, ColdStartTarget[]>();
  for (const target of targets) groups.set(target.group ?? target.name, [...(groups.get(target.group ?? target.name) ?? []), target]);
  let done = 0;
  for (let round = 0; round < runs; round++) {
    for (const target of shuffle([...groups.values()].map((group) => shuffle([...group]))).flat()) {
      const eventFile = target.eventFiles[round % target.eventFiles.length]!;
      await target.beforeRun?.(eventFile);
      const result = await probe(target, eventFile);
      samples.get(target.name)!.push(result);
      progress(++done, runs * targets.length);
    }
  }
  return new Map(targets.map((target) => {
    const s = samples.get(target.name)!;
    return [target.name, {
      name: target.name,
      runs: s.length,
      medianMs: median(s.map((r) => r.totalMs)),
      p10Ms: percentile(s.map((r) => r.totalMs), 10),
      p90Ms: percentile(s.map((r) => r.totalMs), 90),
      medianImportMs: median(s.map((r) => r.importMs)),
      medianFirstCallMs: median(s.map((r) => r.firstCallMs)),
      medianBootMs: median(s.map((r) => r.bootMs)),
      medianCpuMs: median(s.map((r) => r.cpuMs)),
      totalsMs: s.map((r) => r.totalMs),
      cpusMs: s.map((r) => r.cpuMs),
      statuses: [...new Set(s.map((r) => r.status ?? 0))],
      results: s.map((r) => r.result),
      socketsAtLoad: [...new Set(s.flatMap((r) => r.socketsAtLoad))],
      keyFileReadAtLoad: s.some((r) => r.keyFileReadAtLoad),
    }];
  }));
}

/** What the driver reports, for a process that only starts Node: its first statement's time and CPU. */
const BARE_NODE_SCRIPT = `const t=performance.now(),c=process.cpuUsage();process.stdout.write('\\n${MARKER}'+JSON.stringify({totalMs:t,bootMs:t,importMs:0,firstCallMs:0,cpuMs:(c.user+c.system)/1000,socketsAtLoad:[],keyFileReadAtLoad:false})+'\\n')`;

function probe(target: ColdStartTarget, eventFile: string): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const args = target.bareNode ? ['-e', BARE_NODE_SCRIPT] : [DRIVER, target.bundleFile, eventFile];
    const child = spawn(process.execPath, args, {
      env: target.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(MARKER));
      if (code !== 0 || !line) {
        reject(new Error(`Cold start of ${target.name} failed (exit ${code ?? signal}):\n${stderr.slice(-2000)}\n${stdout.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(line.slice(MARKER.length)) as ProbeResult);
    });
  });
}
