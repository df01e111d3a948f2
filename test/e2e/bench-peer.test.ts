import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../support/run-tool';

/** Processes (other than this one) whose environment holds `marker`: what a run left behind. */
function processesWith(marker: string): string[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker)
        ? [`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`]
        : [];
    } catch {
      return []; // gone meanwhile, or not ours to read
    }
  });
}

describe('npm run bench -- --peer', () => {
  it('without the peer installed says how to install it, starts nothing and exits non-zero', async () => {
    const marker = `BENCH_TEST_${randomUUID()}`;
    const { code, stderr } = await runTool('bench/run.ts', ['--peer', '--quick'], {
      BENCH_PEER_PACKAGE: 'oidc-provider-not-installed-here', BENCH_TEST_MARKER: marker,
    });

    expect(code).toBe(1);
    expect(stderr).toContain('The peer (oidc-provider-not-installed-here) is not installed');
    expect(stderr).toContain('npm install --save-dev oidc-provider');
    expect(stderr).not.toMatch(/starting DynamoDB Local|at .*\.ts:\d+/);
    expect(processesWith(marker)).toEqual([]);
  }, 60_000);

  describe('when the peer fails to start', () => {
    // The port the peer is told to use is taken: its listen fails after DynamoDB Local and our server started.
    let taken: Server;
    let port: number;
    beforeAll(async () => {
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      port = (taken.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

    it('says why, exits non-zero and leaves no process behind', async () => {
      const marker = `BENCH_TEST_${randomUUID()}`;
      const { code, stderr } = await runTool('bench/run.ts', ['--peer', '--quick'], {
        BENCH_PEER_PORT: String(port), BENCH_TEST_MARKER: marker,
      }, 120_000);

      expect(stderr).toContain('starting DynamoDB Local');
      expect(stderr).toMatch(/The peer server failed to start: .*EADDRINUSE/);
      expect(code).toBe(1);
      // DynamoDB Local (Java), our token endpoint's server and the peer's: all stopped.
      expect(processesWith(marker)).toEqual([]);
    }, 150_000);
  });

  it('--as-users goes with --peer: alone it is refused with exit status 2, and nothing starts', async () => {
    const { code, stderr } = await runTool('bench/run.ts', ['--as-users', '--quick']);

    expect(code).toBe(2);
    expect(stderr).toContain('--as-users goes with --peer');
    expect(stderr).not.toMatch(/starting/);
  }, 60_000);

  it('--as-users runs npm start and the peer beside it: the four scenarios, npm start left alone before and after, and no process left', async () => {
    const marker = `BENCH_TEST_${randomUUID()}`;
    const { code, stdout, stderr } = await runTool('bench/run.ts', ['--peer', '--as-users', '--quick', '--informational'], { BENCH_TEST_MARKER: marker }, 300_000);

    expect(stderr).toContain('starting npm start');
    expect(code, stderr).toBe(0);
    for (const row of [/refresh_token +2 chains/, /refresh_token +16 chains/, /authorization_code +2 clients/, /authorization_code +8 clients/]) expect(stdout).toMatch(row);
    expect(stdout).toMatch(/before the rounds: [\d.]+ % of one core over 5 s \(Node [\d.]+ %, DynamoDB Local [\d.]+ %\)/);
    expect(stdout).toMatch(/after the rounds: [\d.]+ % of one core/);
    // npm start's whole group (npm, tsx, the service, esbuild, DynamoDB Local's Java) and the peer: all stopped.
    expect(processesWith(marker)).toEqual([]);
  }, 330_000);
});
