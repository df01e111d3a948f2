import { readdirSync, readFileSync } from 'node:fs';

// CPU time of processes from Linux's /proc: of one process, or of every process of a process group
// (`npm start` and all it runs: npm, tsx, the service's Node process, esbuild's service, DynamoDB
// Local's Java), split by what each process is. Elsewhere than Linux every figure is null.

/** utime + stime of one process in milliseconds, its group and its name, or null if it is gone. */
function readStat(pid: number): { cpuMs: number; group: number; name: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name is in parentheses and may hold spaces; the fields after it start with the state.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state, ppid, pgrp, …, utime (the 12th) and stime (the 13th), in clock ticks (100 a second).
    return { cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100, group: Number(fields[2]), name };
  } catch {
    return null;
  }
}

/** User + system CPU of one process in milliseconds, or null (gone, or no /proc). */
export function processCpuMs(pid: number | undefined): number | null {
  return pid === undefined ? null : readStat(pid)?.cpuMs ?? null;
}

/** CPU of a process group, milliseconds: DynamoDB Local's Java apart from the rest (Node, npm, esbuild). */
export interface GroupCpu {
  java: number;
  node: number;
}

/** CPU so far of every live process of group `pgid` (a process that has ended no longer counts: measure deltas of a group that keeps its processes), or null without /proc. */
export function groupCpuMs(pgid: number): GroupCpu | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const totals: GroupCpu = { java: 0, node: 0 };
  for (const pid of pids) {
    const stat = readStat(Number(pid));
    if (stat?.group !== pgid) continue;
    totals[stat.name === 'java' ? 'java' : 'node'] += stat.cpuMs;
  }
  return totals;
}

/** What the group used between two readings (null if either is). */
export function groupDelta(before: GroupCpu | null, after: GroupCpu | null): GroupCpu | null {
  return before && after ? { java: after.java - before.java, node: after.node - before.node } : null;
}
