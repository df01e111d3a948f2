import { fmt, table } from '../report.ts';
import type { AsUsersComparison } from './as-users.ts';
import { GOAL } from './compare.ts';
import { IDLE_BUDGET_PERCENT, type IdleFigure } from './npm-start.ts';

export const AS_USERS_METHOD = 'ours through npm start (local gateway, example app, webhook pipeline, IoT stand-in, DynamoDB Local in one process group), the peer beside it on the same DynamoDB Local and table; closed loop on keep-alive connections, alternating rounds (ours first in even rounds); refresh: N chains, each rotating its own token with the one the previous answer gave; exchange: N clients redeeming codes made before each round (untimed); CPU from /proc per process group';

/** The `peerAsUsers` section of bench-results.json. */
export function asUsersSection(comparison: AsUsersComparison, load: { before: number[]; after: number[] }) {
  const idleOk = (figure: IdleFigure | null) => figure === null || figure.percentOfOneCore <= IDLE_BUDGET_PERCENT;
  return {
    package: comparison.package,
    version: comparison.version,
    method: AS_USERS_METHOD,
    /** The machine's load averages (1, 5, 15 minutes) when the run began and ended: ratios from a busy machine mean little. */
    loadAverage: load,
    counts: comparison.counts,
    goal: { throughputRatioAtLeast: GOAL.throughputRatio, p99RatioAtMost: GOAL.p99Ratio, idlePercentOfOneCoreAtMost: IDLE_BUDGET_PERCENT },
    idle: { ...comparison.idle, withinBudget: idleOk(comparison.idle.before) && idleOk(comparison.idle.after) },
    scenarios: comparison.scenarios,
    summary: { goalMet: comparison.scenarios.filter((s) => s.goal.met).length, scenarios: comparison.scenarios.length },
  };
}

export type AsUsersSection = ReturnType<typeof asUsersSection>;

const idleLine = (name: string, f: IdleFigure | null) => (f
  ? `  ${name}: ${fmt(f.percentOfOneCore, 2)} % of one core over ${f.seconds} s (Node ${fmt(f.nodePercent, 2)} %, DynamoDB Local ${fmt(f.dynamodbLocalPercent, 2)} %)`
  : `  ${name}: not measured (no /proc)`);

/** The printed tables. */
export function renderAsUsers(section: AsUsersSection): string {
  const cpu = (v: number | null) => (v === null ? '–' : fmt(v, 2));
  const rows = section.scenarios.map((s) => [
    s.grant, `${s.concurrency} ${s.grant === 'refresh_token' ? 'chains' : 'clients'}`,
    fmt(s.ours.requestsPerSecond, 1), fmt(s.peer.requestsPerSecond, 1), `${fmt(s.ratios.throughput)}${s.goal.throughput ? '' : ` <${GOAL.throughputRatio}`}`,
    `${fmt(s.ours.p50Ms, 1)} / ${fmt(s.ours.p99Ms, 1)}`, `${fmt(s.peer.p50Ms, 1)} / ${fmt(s.peer.p99Ms, 1)}`, fmt(s.ratios.p99),
    `${cpu(s.ours.serverCpuMsPerCall)} / ${cpu(s.peer.serverCpuMsPerCall)}`,
    `${cpu(s.ours.dynamodbLocalCpuMsPerCall)} / ${cpu(s.peer.dynamodbLocalCpuMsPerCall)}`,
    `${s.ours.roundsRequestsPerSecond.join(' ')} | ${s.peer.roundsRequestsPerSecond.join(' ')}`,
    `${s.ours.errors} / ${s.peer.errors}`,
    s.goal.met ? 'met' : 'missed',
  ]);
  return [
    `Ours as users run it (npm start) against the peer (${section.package} ${section.version}), the same DynamoDB Local:`,
    table(
      ['grant', 'load', 'ours req/s', 'peer req/s', 'req/s ÷', 'ours p50/p99 ms', 'peer p50/p99 ms', 'p99 ÷',
        'CPU ms/call npm start (Node) / peer', 'DDB Local CPU ms/call ours/peer', 'req/s per round ours | peer', 'errors', 'goal'],
      rows,
    ),
    `Goal: req/s ÷ ≥ ${GOAL.throughputRatio} and p99 ÷ ≤ ${GOAL.p99Ratio}: met in ${section.summary.goalMet} of ${section.summary.scenarios}.`,
    `npm start left alone (budget ${IDLE_BUDGET_PERCENT} % of one core):`,
    idleLine('before the rounds', section.idle.before),
    idleLine('after the rounds', section.idle.after),
    `Load average (1/5/15 min) at the start ${section.loadAverage.before.map((v) => fmt(v, 2)).join(' ')}, at the end ${section.loadAverage.after.map((v) => fmt(v, 2)).join(' ')}: ratios from a busy machine mean little.`,
  ].join('\n');
}
