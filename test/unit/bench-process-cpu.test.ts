import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { groupCpuMs, groupDelta, processCpuMs } from '../../bench/peer/process-cpu';

// The benchmark's CPU figures of `npm start` and the peer come from /proc (Linux): one process's, or
// a whole process group's with DynamoDB Local's Java apart.


/** Keeps this process busy for `ms` of wall time. */
const burn = (ms: number) => {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
};

describe('CPU of processes and process groups', () => {
  it('reads this process\'s CPU as process.cpuUsage() does, within the clock tick', () => {
    const before = processCpuMs(process.pid)!;
    const usage = process.cpuUsage();
    burn(200);
    const used = processCpuMs(process.pid)! - before;
    const measured = process.cpuUsage(usage);

    // /proc counts whole ticks (10 ms) and other threads of this process too: close, not equal.
    expect(used).toBeGreaterThan((measured.user + measured.system) / 1000 - 20);
    expect(used).toBeLessThan((measured.user + measured.system) / 1000 + 200);
  });

  it('counts a busy Node process of a group of its own as Node, not as DynamoDB Local', async () => {
    // A group of its own (detached): the test run's group also holds the suite's DynamoDB Local, busy with other files.
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 5000; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1);'], { detached: true, stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = groupCpuMs(child.pid!);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const used = groupDelta(before, groupCpuMs(child.pid!))!;

      expect(used.node).toBeGreaterThan(0);
      expect(used.java).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('has no figure for a process that does not exist, and no group delta without both readings', () => {
    expect(processCpuMs(2 ** 22 + 1)).toBeNull();
    expect(groupDelta(null, { java: 1, node: 1 })).toBeNull();
  });
});
