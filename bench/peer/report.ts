import { fmt, table } from '../report.ts';
import { GOAL, type PeerComparison } from './compare.ts';

/** What the two servers still do differently (bench/RESULTS.md explains each). */
export const PEER_DIFFERENCES = [
  'Client: ours reads the client from the table in the same BatchGetItem as the code or token; the peer keeps its static client in memory (no request).',
  'Grant model: ours stores a code as its token family\'s first state (one item, which the exchange turns into the family holding its refresh tokens\' hashes) and reads the consent in the same BatchGetItem as the code or token; the peer keeps one Grant item (the consent, read on every call), and a code or refresh token item per value.',
  'Single use: ours spends a code and rotates a refresh token each with one conditional UpdateItem of the family\'s item; the peer reads, then consumes with a conditional UpdateItem (this adapter; without the condition a race would pass), then writes the new refresh token with a PutItem.',
  'Reuse: a replayed code or rotated token revokes its family in ours (and a rotation retried gets the same successor until that successor is used); in the peer it revokes the whole grant (revokeByGrantId: a Query and a delete per record).',
  'Sessions: neither endpoint reads the user or a session; the peer\'s tokens are made with expiresWithSession false (as for offline access).',
  'Keys: both sign RS256 with the same local key; ours reads its signing-key schedule once a minute (a GetItem, counted), the peer\'s keystore is in memory.',
  'Hashing: ours stores SHA-256 hashes of codes and tokens, the peer stores them by their value (its ids).',
  'HTTP: ours runs behind the API Gateway stand-in (local/gateway.ts: an event per request, a log line per call), the peer is a Koa application: each server in a Node process of its own.',
] as const;

export const NOT_COMPARED = 'GET /devices is left out: it is a resource-server read (one Query behind the gateway\'s JWT authorizer); oidc-provider is only an authorization server and has no resource API, and its userinfo or introspection endpoints do different work (a token lookup, claims of an account), so no call of the peer is the same job.';

export const GRANTS_MADE_BY = 'before each round, untimed, through each server\'s own models: the peer\'s Grant (once: the consent), AuthorizationCode and RefreshToken; our grant repository (createCode; redeemCode for a refresh token\'s family). No login or consent interaction is driven.';

/** The `peer` section of bench-results.json. */
export function peerSection(comparison: PeerComparison, plot: string) {
  return {
    package: comparison.package,
    version: comparison.version,
    method: 'closed loop, N keep-alive connections on loopback, same driver for both, alternating rounds (ours first in even rounds)',
    grantsMadeBy: GRANTS_MADE_BY,
    counts: comparison.counts,
    goal: { throughputRatioAtLeast: GOAL.throughputRatio, p99RatioAtMost: GOAL.p99Ratio, fewerDynamoDbRequests: true },
    differences: PEER_DIFFERENCES,
    notCompared: [{ endpoint: 'GET /devices', reason: NOT_COMPARED }],
    plot,
    scenarios: comparison.scenarios,
    summary: {
      goalMet: comparison.scenarios.filter((s) => s.goal.met).length,
      scenarios: comparison.scenarios.length,
    },
  };
}

export type PeerSection = ReturnType<typeof peerSection>;

const waited = (side: { dynamodbMsPerCall: Record<string, number> }) => Object.values(side.dynamodbMsPerCall).reduce((a, b) => a + b, 0);

/** The printed table. */
export function renderPeer(section: PeerSection): string {
  const rows = section.scenarios.map((s) => [
    s.grant, s.concurrency,
    fmt(s.ours.requestsPerSecond, 1), fmt(s.peer.requestsPerSecond, 1), `${fmt(s.ratios.throughput)}${s.goal.throughput ? '' : ' <1.5'}`,
    `${fmt(s.ours.p50Ms, 1)} / ${fmt(s.ours.p99Ms, 1)}`, `${fmt(s.peer.p50Ms, 1)} / ${fmt(s.peer.p99Ms, 1)}`, fmt(s.ratios.p99),
    `${fmt(s.ours.dynamodbRequestsPerCall, 2)} / ${fmt(s.peer.dynamodbRequestsPerCall, 2)}`,
    `${fmt(s.ours.serverCpuMsPerCall, 2)} / ${fmt(s.peer.serverCpuMsPerCall, 2)}`,
    `${fmt(waited(s.ours), 1)} / ${fmt(waited(s.peer), 1)}`,
    `${fmt(s.ours.dynamodbLocalCpuMsPerCall ?? undefined, 1)} / ${fmt(s.peer.dynamodbLocalCpuMsPerCall ?? undefined, 1)}`,
    `${s.ours.roundsRequestsPerSecond.join(' ')} | ${s.peer.roundsRequestsPerSecond.join(' ')}`,
    `${s.ours.errors} / ${s.peer.errors}`,
    s.goal.met ? 'met' : 'missed',
  ]);
  return [
    `Ours against the peer (${section.package} ${section.version}), token endpoint over HTTP on loopback, DynamoDB Local for both:`,
    table(
      ['grant', 'clients', 'ours req/s', 'peer req/s', 'req/s ÷', 'ours p50/p99 ms', 'peer p50/p99 ms', 'p99 ÷', 'DDB req/call ours/peer', 'server CPU ms/call ours/peer', 'DDB wait ms/call ours/peer', 'DDB Local CPU ms/call ours/peer', 'req/s per round ours | peer', 'errors', 'goal'],
      rows,
    ),
    `Ratios are ours ÷ peer. Goal: req/s ÷ ≥ ${GOAL.throughputRatio}, p99 ÷ ≤ ${GOAL.p99Ratio}, fewer DynamoDB requests: met in ${section.summary.goalMet} of ${section.summary.scenarios}.`,
    `Grants made ${GRANTS_MADE_BY}`,
    `Plot: ${section.plot}. Not compared: GET /devices (bench/RESULTS.md says why).`,
  ].join('\n');
}
