import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool, type ToolRun } from '../support/run-tool';

/** The processes (ids and command lines) whose environment carries `marker`: the child and what it started. */
function processesWith(marker: string): { pid: string; command: string }[] {
  const found: { pid: string; command: string }[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker)) {
        found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') });
      }
    } catch {
      // Gone meanwhile, or another user's.
    }
  }
  return found;
}

/**
 * `npm start` in a child process (a state folder of its own, so `.local/` is never written), with a
 * marker in its environment that the processes it starts inherit: the run reports whether a Java
 * process of it ran, and which of its processes are left once it has exited.
 */
async function start(env: Record<string, string>): Promise<ToolRun & { javaRan: boolean; left: string[]; stateFiles: string[] }> {
  const marker = `DUS_START_TEST=${randomUUID()}`;
  const stateDir = mkdtempSync(join(tmpdir(), 'dus-start-'));
  let javaRan = false;
  const watch = setInterval(() => {
    javaRan ||= processesWith(marker).some((p) => p.command.includes('DynamoDBLocal'));
  }, 100);
  try {
    const run = await runTool('local/start.ts', [], { ...env, STATE_DIR: stateDir, [marker.split('=')[0]!]: marker.split('=')[1]! }, 90_000);
    return { ...run, javaRan, left: processesWith(marker).map((p) => `${p.pid} ${p.command}`), stateFiles: readdirSync(stateDir) };
  } finally {
    clearInterval(watch);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

describe.skipIf(process.platform !== 'linux')('npm start on a taken port', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => (taken ? taken.close(() => resolve()) : resolve())));

  it('names the port, its use and API_PORT in one line, stops DynamoDB Local and exits 1', async () => {
    const run = await start({ API_PORT: String(port), AUTH_PORT: '0', EXAMPLE_PORT: '0' });

    expect(run.stderr.trim().split('\n')).toEqual([`Port ${port} (the resource API) is already in use: set API_PORT to a free port (API_PORT=0 picks one).`]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    // DynamoDB Local starts before the hosts: it ran, and nothing of the run is left.
    expect(run.javaRan).toBe(true);
    expect(run.left).toEqual([]);
    expect(run.stateFiles).toEqual([]);
  }, 120_000);

  it('does the same for the example app, after the service is up, naming EXAMPLE_PORT', async () => {
    const run = await start({ API_PORT: '0', AUTH_PORT: '0', EXAMPLE_PORT: String(port) });

    expect(run.stderr.trim().split('\n')).toEqual([`Port ${port} (the example app) is already in use: set EXAMPLE_PORT to a free port (EXAMPLE_PORT=0 picks one).`]);
    expect(run.code).toBe(1);
    expect(run.javaRan).toBe(true);
    expect(run.left).toEqual([]);
    expect(run.stateFiles).toEqual([]);
  }, 120_000);

  it('refuses a port variable that is not a port in one line naming it, before starting anything', async () => {
    for (const [name, value] of [['AUTH_PORT', 'http'], ['EXAMPLE_PORT', '70000'], ['API_PORT', '-1']] as const) {
      const run = await start({ API_PORT: '0', AUTH_PORT: '0', EXAMPLE_PORT: '0', [name]: value });

      expect(run.stderr.trim().split('\n')).toEqual([`${name} must be a port number from 0 to 65535 (0 picks a free port), not '${value}'.`]);
      expect(run.code).toBe(2);
      expect(run.javaRan).toBe(false);
      expect(run.left).toEqual([]);
    }
  }, 120_000);
});
