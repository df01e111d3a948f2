import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLIENT_CACHE_SECONDS } from '#shared/oauth/client-cache';
import { DEPLOYED_ROUTES, type FunctionName } from '#functions/registry';
import { THROTTLES } from '#shared/routes';

// The scale and cost model of docs/operations.md: monthly cost and binding quotas as functions of the
// monthly active users, computed from the benchmark's measured figures (requests per call, floors,
// warm latency, CPU, cold start) and stated usage and price inputs. `npm run cost` prints the tables;
// `npm run cost -- --write` puts them into docs/operations.md (test/unit/cost-model.test.ts checks that
// the page holds exactly what the model computes); `--results bench-results.json` uses a fresh run.

/** One benchmark scenario, as the model needs it. */
export interface Measured {
  /** The scenario's name, e.g. `post-token (refresh)`. */
  scenario: string;
  fn: FunctionName;
  /** Warm median latency of a call, milliseconds (DynamoDB Local on the bench machine). */
  p50Ms: number;
  /** CPU of a call (for scenarios with a bare comparison: the handler's CPU beyond its requests). */
  cpuMs: number;
  /** Median cold start of the function, milliseconds (its first scenario's). */
  coldMs: number;
  /** DynamoDB requests per call, measured. */
  requestsPerCall: number;
  /** The floor the function met, e.g. `BatchGetItem(refreshToken, client) + TransactWriteItems(…) + RS256 signature`. */
  floor: string;
}

/** Prices in us-east-1 (arm64 Lambda, HTTP API, DynamoDB on demand, Standard table class), in USD. */
export const PRICES = {
  checked: '2026-11-23',
  /** HTTP API: per million requests, the first 300 million a month, and beyond. */
  apiGatewayPerMillion: 1.0, apiGatewayPerMillionAbove300M: 0.9,
  lambdaRequestsPerMillion: 0.2,
  /** arm64, first 7.5 billion GB-seconds a month. */
  lambdaArmPerGbSecond: 0.0000133334,
  dynamoDbPerMillionReadUnits: 0.125, dynamoDbPerMillionWriteUnits: 0.625,
  dynamoDbStoragePerGbMonth: 0.25, dynamoDbPitrPerGbMonth: 0.2,
  kmsKeyPerMonth: 1.0,
  /** Requests involving RSA 2048 keys (Sign), per 10,000. */
  kmsRsa2048Per10k: 0.03,
  /** Standard class; Lambda's own logs are tiered from the same price after 10 TB a month. */
  logsIngestionPerGb: 0.5, logsStoragePerGbMonth: 0.03,
  sesPer1000Emails: 0.1,
  /** Cognito user pools, per monthly active user (Lite is tiered; the first 10,000 are free in Lite and Essentials). */
  cognitoLiteTiers: [[10_000, 0], [100_000, 0.0055], [1_000_000, 0.0046], [10_000_000, 0.00325], [Infinity, 0.0025]] as const,
  cognitoEssentialsPerMau: 0.015, cognitoEssentialsFree: 10_000,
  cognitoPlusPerMau: 0.02,
  /** SQS standard queues, per million requests (each 64 KB of a request's payload is one; the first million a month is free: left out). */
  sqsPerMillion: 0.4,
  /** DynamoDB Streams: GetRecords made by a Lambda trigger is free (only other consumers pay per streams read request). */
  dynamoDbStreamsLambdaReads: 0,
};

/** How a monthly active user uses the service. */
export const USAGE = {
  daysPerMonth: 30,
  /** The app polls `GET /devices` this often while it is open… */
  pollSeconds: 60,
  /** …for this many hours a day, over this many openings. */
  appHoursPerDay: 2,
  /** Openings a day, each with one `GET /user` and one `GET /devices/{id}`. */
  appOpensPerDay: 4,
  /** Refreshes: the access token lives 3600 s, and the openings are hours apart, so one per opening. */
  refreshesPerDay: 4,
  deviceWritesPerDay: 4,
  /** Web sign-ins (login page, then the account page) per user and month. */
  webSignInsPerMonth: 1,
  /** New authorizations of an application (authorize, consent, code exchange) per user and month. */
  authorizationsPerMonth: 0.1,
  /** Shares of the monthly active users who sign up, ask for a new confirmation, reset their password. */
  signUpShare: 0.03, resendShare: 0.005, resetShare: 0.02,
  /** The busiest hour carries this multiple of the month's average rate. */
  peakFactor: 3,
};

/** How a benchmark figure becomes an AWS figure. */
export const RUNTIME = {
  memoryMb: 512,
  /** Lambda gives a full vCPU at 1,769 MB: CPU-bound work (scrypt) is this much slower at memoryMb. */
  fullCpuMb: 1769,
  /** Added per DynamoDB request: an in-region round trip is slower than DynamoDB Local on loopback. */
  dynamoDbExtraMs: 3,
  /** A KMS Sign request from Lambda (the benchmark signed with a local key, counted in p50). */
  kmsSignMs: 10,
  /** An SES SendEmail request. */
  sesSendMs: 30,
  /** Share of calls that start a new container (INIT is billed since August 2025). */
  coldStartShare: 0.01,
  /** Log bytes per call: our request line, Lambda's platform records (JSON format), the stage's access log line. */
  logBytesPerCall: 350 + 450 + 280,
  /**
   * Stored bytes per user: profile, e-mail item, 3 devices, a consent, a token family (its refresh
   * tokens are two hashes and a sealed successor in it: no item of their own, nothing kept per
   * rotation), index entries, overheads.
   */
  storageBytesPerUser: 600 + 200 + 3 * 350 + 300 + 600 + 4 * 200,
};

/** Account quotas that bind as users grow (defaults of a new account, us-east-1). */
export const QUOTAS = {
  apiGatewayAccountRps: 10_000,
  lambdaConcurrency: 1_000,
  kmsRsaOpsPerSecond: 500,
  dynamoDbPartitionReadUnits: 3_000, dynamoDbPartitionWriteUnits: 1_000,
  sesSendRate: 14, sesPerDay: 50_000,
};

// --- Reading the benchmark ---------------------------------------------------------------------

/** The scenarios of the printed table in bench/RESULTS.md (the fenced output of one full run). */
export function parseResultsMarkdown(text: string): Measured[] {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => line.startsWith('function ') && line.includes('DDB req/call'));
  if (header < 0) throw new Error('bench/RESULTS.md: no printed results table');
  const measured: Measured[] = [];
  const coldOf = new Map<string, number>();
  for (const line of lines.slice(header + 2)) {
    if (line.trim() === '') break;
    // A function without a scenario of its own (no floor: its row ends with `?`) has nothing to cost.
    if (/^\S+ \(generic\)/.test(line)) continue;
    const name = /^(\S+(?: \([^)]*\))?)\s{2,}/.exec(line)?.[1];
    const warm = /(\d+\.\d+) \/ (\d+\.\d+)/.exec(line);
    // The CPU column is signed (`+0.089`, `-0.009`; runs before 2026-11-23's last printed `+-0.009`).
    const tail = /\s\+?(-?\d+\.\d+)\s+(\d+\.\d)(?: PASS| FAIL)?\s+(\d+): (.+)$/.exec(line);
    if (!name || !warm || !tail) throw new Error(`bench/RESULTS.md: cannot read the row ${JSON.stringify(line)}`);
    const fn = name.replace(/ \(.*\)$/, '') as FunctionName;
    const cold = /^\S+(?: \([^)]*\))?\s+\d+\.\d\s+\d+\.\d{3} (?:PASS|FAIL)\s+(\d+\.\d)\s/.exec(line);
    if (cold) coldOf.set(fn, Number(cold[1]));
    measured.push({
      scenario: name, fn, p50Ms: Number(warm[1]), cpuMs: Number(tail[1]), coldMs: coldOf.get(fn) ?? NaN,
      requestsPerCall: Number(tail[2]), floor: tail[4]!.trim(),
    });
  }
  return measured;
}

/** The same figures from a run's `bench-results.json` (schemaVersion 2, bench/RESULTS.md). */
export function measuredFromJson(json: any): Measured[] {
  if (json.schemaVersion !== 2) throw new Error(`bench-results.json: schemaVersion ${json.schemaVersion}, expected 2`);
  if (!Array.isArray(json.functions)) throw new Error(`bench-results.json of a ${json.mode} run has no function figures: run npm run bench (without --peer)`);
  return json.functions.flatMap((f: any) => f.scenarios.filter((s: any) => s.warm && s.dynamodb.floor).map((s: any) => ({
    scenario: s.name, fn: f.name, p50Ms: s.warm.p50Ms, cpuMs: s.warm.overheadCpuMsPerCall ?? s.warm.cpuMsPerCall,
    coldMs: f.coldStart.medianMs, requestsPerCall: s.dynamodb.requestsPerCall, floor: s.dynamodb.floor,
  })));
}

/** One step of a floor label. */
export type FloorStep =
  | { op: 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'BatchGetItem' | 'TransactWriteItems'; of: string[] }
  | { op: 'Query'; of: string[]; count: number; index: boolean }
  /**
   * CPU work (password hashing, the password strength estimate, the signature, an address check, loading the SQS or KMS
   * client): in the measured CPU, no request units.
   */
  | { op: 'scrypt' | 'sign' | 'zxcvbn' | 'addressCheck' | 'queueClient' | 'kmsClient' }
  /**
   * The webhook pipeline's other ends: one message sent to the delivery queue, one delivery POSTed to a receiver. In the
   * measured time; their money is the push scenario's (perDelivery, from the webhook benchmark), not a call's.
   */
  | { op: 'queueSend' | 'signedPost' }
  /** One e-mail sent (an SES request in AWS). */
  | { op: 'mail' }
  | { op: 'wait'; ms: number };

/** `BatchGetItem(session, user) + Query(gsi1: client ×2) + scrypt` → steps (`none` → none). */
export function parseFloor(label: string): FloorStep[] {
  if (label === 'none') return [];
  return label.split(' + ').map((part): FloorStep => {
    if (part === 'scrypt') return { op: 'scrypt' };
    if (part === 'zxcvbn') return { op: 'zxcvbn' };
    if (part === 'RS256 signature') return { op: 'sign' };
    if (part === 'e-mail') return { op: 'mail' };
    if (part === 'address check') return { op: 'addressCheck' };
    if (part === 'SQS client') return { op: 'queueClient' };
    if (part === 'KMS client') return { op: 'kmsClient' };
    if (part === 'SQS send') return { op: 'queueSend' };
    if (part === 'signed POST') return { op: 'signedPost' };
    const wait = /^wait (\d+) ms$/.exec(part);
    if (wait) return { op: 'wait', ms: Number(wait[1]) };
    const query = /^Query\((gsi1: )?(\w+) ×(\d+)\)$/.exec(part);
    if (query) return { op: 'Query', of: [query[2]!], count: Number(query[3]), index: Boolean(query[1]) };
    const request = /^(GetItem|PutItem|UpdateItem|DeleteItem|BatchGetItem|TransactWriteItems)\(([\w, ]+)\)$/.exec(part);
    if (request) return { op: request[1] as 'GetItem', of: request[2]!.split(', ') };
    throw new Error(`unknown floor step ${JSON.stringify(part)}`);
  });
}

// --- Per call ----------------------------------------------------------------------------------

/**
 * Item kinds read with strong consistency by a GetItem (BatchGetItem always is: shared/data/batch-read.ts); the
 * signing-key schedule by the rotation, which writes over what it read (its readers keep it: CACHED_PER_INSTANCE).
 */
const CONSISTENT_GETS = new Set(['link', 'family', 'keySchedule']);
/**
 * Item kinds an instance reads once and keeps, so a warm call reads none: the signing-key schedule at
 * the token endpoint and the JWKS (signing-key-repo.ts: a minute; the rotation reads it on every run),
 * and at the token endpoint the client (client-cache.ts: 5 s).
 */
const CACHED_PER_INSTANCE: Record<string, readonly FunctionName[]> = { keySchedule: ['post-token', 'get-jwks'], client: ['post-token'] };
const cachedBy = (fn: FunctionName, kind: string) => CACHED_PER_INSTANCE[kind]?.includes(fn) ?? false;
/** Item kinds with a gsi1 entry: a write of one also writes the index (shared/data/item-keys.ts; a code is its family's item). */
const INDEXED = new Set(['device', 'client', 'consent', 'session', 'family', 'code']);

/**
 * Request units of one call, on items under 4 KB (reads) and 1 KB (writes): a strongly consistent
 * read 1 RRU, an eventually consistent one (GetItem of the other kinds, Query, any gsi1 Query) 0.5 and
 * at least that for an empty result; a write 1 WRU, 2 in a transaction; plus 1 WRU per index entry written.
 */
export function requestUnits(steps: readonly FloorStep[]): { rru: number; wru: number; requests: number } {
  let rru = 0, wru = 0, requests = 0;
  for (const step of steps) {
    switch (step.op) {
      case 'GetItem': rru += CONSISTENT_GETS.has(step.of[0]!) ? 1 : 0.5; requests++; break;
      case 'BatchGetItem': rru += step.of.length; requests++; break;
      case 'Query': rru += 0.5; requests++; break;
      case 'PutItem': case 'UpdateItem': case 'DeleteItem':
        wru += 1 + (INDEXED.has(step.of[0]!) ? 1 : 0); requests++; break;
      case 'TransactWriteItems':
        wru += step.of.reduce((sum, kind) => sum + 2 + (INDEXED.has(kind) ? 1 : 0), 0); requests++; break;
      default: break;
    }
  }
  return { rru, wru, requests };
}

/** What one call of a scenario costs AWS: billed Lambda milliseconds, request units, KMS signatures, e-mails. */
export function perCall(m: Measured) {
  // A read of what an instance keeps (CACHED_PER_INSTANCE) is in a cold start's floor, not in a warm call's cost.
  const steps = parseFloor(m.floor).flatMap((s): FloorStep[] => {
    if (!('of' in s)) return [s];
    const of = s.of.filter((kind) => !cachedBy(m.fn, kind));
    return of.length === 0 ? [] : [{ ...s, of }];
  });
  const units = requestUnits(steps);
  if (units.requests !== Math.round(m.requestsPerCall)) {
    throw new Error(`${m.scenario}: measured ${m.requestsPerCall} DynamoDB requests per call, its floor ${m.floor} has ${units.requests}`);
  }
  const signs = steps.filter((s) => s.op === 'sign').length;
  const mails = steps.filter((s) => s.op === 'mail').length;
  const slowdown = RUNTIME.fullCpuMb / RUNTIME.memoryMb;
  // CPU beyond the bare requests', never less than none (a measured difference can be slightly negative).
  const warmMs = m.p50Ms + Math.max(m.cpuMs, 0) * (slowdown - 1) + units.requests * RUNTIME.dynamoDbExtraMs + signs * RUNTIME.kmsSignMs + mails * RUNTIME.sesSendMs;
  return {
    /** Wall time of a warm call in Lambda (also what concurrency is made of). */
    awsMs: warmMs,
    /** Billed: whole milliseconds, plus the INIT of the calls that start a container. */
    billedMs: Math.ceil(warmMs) + RUNTIME.coldStartShare * (Number.isFinite(m.coldMs) ? m.coldMs : 0),
    ...units, signs, mails,
  };
}

/** Calls of each scenario per monthly active user and month. */
export function callsPerUserMonth(usage = USAGE): Record<string, number> {
  const days = usage.daysPerMonth;
  return {
    'list-devices': (usage.appHoursPerDay * 3600 / usage.pollSeconds) * days,
    'get-user': usage.appOpensPerDay * days,
    'get-device': usage.appOpensPerDay * days,
    'update-device': usage.deviceWritesPerDay * days,
    'post-token (refresh)': usage.refreshesPerDay * days,
    'get-authorize': usage.authorizationsPerMonth,
    'post-authorize': usage.authorizationsPerMonth,
    'post-token (code)': usage.authorizationsPerMonth,
    'get-login': usage.webSignInsPerMonth,
    'post-login': usage.webSignInsPerMonth,
    'get-account': usage.webSignInsPerMonth,
    'get-signup': usage.signUpShare,
    'post-signup': usage.signUpShare,
    'get-confirm-email': usage.signUpShare,
    'post-confirm-email': usage.signUpShare,
    'post-resend-confirmation': usage.resendShare,
    'get-password-reset': usage.resetShare,
    'post-password-reset': usage.resetShare,
    'get-new-password': usage.resetShare,
    'post-new-password': usage.resetShare,
  };
}

const SECONDS_PER_MONTH = USAGE.daysPerMonth * 86_400;
const apiOf = (fn: FunctionName) => DEPLOYED_ROUTES.find((r) => r.fn === fn)!.api;

// --- Per month ---------------------------------------------------------------------------------

export interface MonthlyCost {
  mau: number;
  requests: number;
  lines: Record<'apiGateway' | 'lambda' | 'dynamoDb' | 'kms' | 'logs' | 'ses', number>;
  resourceApi: number;
  authServer: number;
  total: number;
}

/** The monthly bill at `mau` monthly active users. */
export function monthlyCost(mau: number, measured: readonly Measured[], usage = USAGE, prices = PRICES): MonthlyCost {
  const calls = callsPerUserMonth(usage);
  const byApi = { resource: 0, auth: 0 };
  let requests = 0;
  const variable: { api: 'resource' | 'auth'; requests: number; lambda: number; dynamoDb: number; kms: number; logs: number; ses: number }[] = [];
  for (const m of measured) {
    const n = (calls[m.scenario] ?? 0) * mau;
    if (n === 0) continue;
    const c = perCall(m);
    requests += n;
    variable.push({
      api: apiOf(m.fn), requests: n,
      lambda: n * (prices.lambdaRequestsPerMillion / 1e6 + c.billedMs / 1000 * RUNTIME.memoryMb / 1024 * prices.lambdaArmPerGbSecond),
      dynamoDb: n * (c.rru * prices.dynamoDbPerMillionReadUnits + c.wru * prices.dynamoDbPerMillionWriteUnits) / 1e6,
      kms: n * c.signs * prices.kmsRsa2048Per10k / 1e4,
      logs: n * RUNTIME.logBytesPerCall / 1e9 * (prices.logsIngestionPerGb + prices.logsStoragePerGbMonth),
      ses: n * c.mails * prices.sesPer1000Emails / 1e3,
    });
  }
  // API Gateway's tiers apply to the month's total; each API pays its share at the blended price.
  const apiGateway = Math.min(requests, 300e6) * prices.apiGatewayPerMillion / 1e6
    + Math.max(requests - 300e6, 0) * prices.apiGatewayPerMillionAbove300M / 1e6;
  const storageGb = mau * RUNTIME.storageBytesPerUser / 1e9;
  const storage = storageGb * (prices.dynamoDbStoragePerGbMonth + prices.dynamoDbPitrPerGbMonth);
  const lines = { apiGateway, lambda: 0, dynamoDb: storage, kms: prices.kmsKeyPerMonth, logs: 0, ses: 0 };
  for (const v of variable) {
    const share = v.lambda + v.dynamoDb + v.kms + v.logs + v.ses + apiGateway * v.requests / requests;
    byApi[v.api] += share;
    lines.lambda += v.lambda; lines.dynamoDb += v.dynamoDb; lines.kms += v.kms; lines.logs += v.logs; lines.ses += v.ses;
  }
  // Storage belongs to both; the key to the authorization server.
  byApi.resource += storage / 2; byApi.auth += storage / 2 + prices.kmsKeyPerMonth;
  const total = Object.values(lines).reduce((a, b) => a + b, 0);
  return { mau, requests, lines, resourceApi: byApi.resource, authServer: byApi.auth, total };
}

/** What Amazon Cognito user pools charge for `mau` monthly active users, per feature plan. */
export function cognitoCost(mau: number, prices = PRICES) {
  let lite = 0, below = 0;
  for (const [upTo, price] of prices.cognitoLiteTiers) {
    lite += Math.max(Math.min(mau, upTo) - below, 0) * price;
    below = upTo;
  }
  return {
    lite,
    essentials: Math.max(mau - prices.cognitoEssentialsFree, 0) * prices.cognitoEssentialsPerMau,
    plus: mau * prices.cognitoPlusPerMau,
  };
}

// --- Scale -------------------------------------------------------------------------------------

/** Peak requests per second of each scenario at `mau` (the busiest hour). */
export function peakRps(mau: number, usage = USAGE): Record<string, number> {
  return Object.fromEntries(Object.entries(callsPerUserMonth(usage)).map(([scenario, n]) => [scenario, mau * n / SECONDS_PER_MONTH * usage.peakFactor]));
}

export interface Binding { limit: string; quota: string; bindsAtMau: number; then: string }

const n = (value: number) => value.toLocaleString('en-US');

/** The limits that bind as users grow, each with the monthly active users at which it does, in that order. */
export function bindingLimits(measured: readonly Measured[], usage = USAGE): Binding[] {
  const perUser = peakRps(1, usage);
  const of = (scenario: string) => perUser[scenario] ?? 0;
  const total = Object.values(perUser).reduce((a, b) => a + b, 0);
  const tokens = of('post-token (refresh)') + of('post-token (code)');
  /** Lambda instances busy per user at the peak: calls per second × seconds per call. */
  const concurrencyOf = (scenarios: readonly Measured[]) => scenarios.reduce((sum, m) => sum + of(m.scenario) * perCall(m).awsMs / 1000, 0);
  const concurrency = concurrencyOf(measured);
  const tokenConcurrency = concurrencyOf(measured.filter((m) => m.fn === 'post-token'));
  const mailsPerDay = (usage.signUpShare + usage.resendShare + usage.resetShare) / usage.daysPerMonth;
  const list: Binding[] = [
    { limit: 'Route throttle `resource-read` (`GET /devices`)', quota: `${n(THROTTLES['resource-read'].rateLimit)}/s per route key`,
      bindsAtMau: THROTTLES['resource-read'].rateLimit / of('list-devices'),
      then: 'raise `THROTTLES[\'resource-read\']` in `shared/routes.ts` (the account limit is next)' },
    { limit: 'Route throttle `token` (`POST /oauth/token`)', quota: `${THROTTLES.token.rateLimit}/s`,
      bindsAtMau: THROTTLES.token.rateLimit / tokens,
      then: 'raise it together with the KMS quota (it is half of it by design)' },
    { limit: 'Route throttle `device-write`', quota: `${THROTTLES['device-write'].rateLimit}/s per route key`,
      bindsAtMau: THROTTLES['device-write'].rateLimit / of('update-device'), then: 'raise it' },
    { limit: 'Route throttle `login` (`POST /login`)', quota: `${THROTTLES.login.rateLimit}/s`,
      bindsAtMau: THROTTLES.login.rateLimit / of('post-login'), then: 'raise it; the per-account throttle still holds' },
    { limit: 'API Gateway account rate (all APIs of the account and region)', quota: `${n(QUOTAS.apiGatewayAccountRps)}/s`,
      bindsAtMau: QUOTAS.apiGatewayAccountRps / total,
      then: of('list-devices') > 0
        ? `ask AWS Support to raise it; better, poll less (a longer interval, or push: webhooks): polls are ${Math.round(of('list-devices') / total * 100)} % of all requests`
        : 'ask AWS Support to raise it' },
    { limit: 'KMS RSA operations (Sign)', quota: `${QUOTAS.kmsRsaOpsPerSecond}/s (adjustable, Service Quotas L-2AC98190)`,
      bindsAtMau: QUOTAS.kmsRsaOpsPerSecond / tokens,
      then: 'request a higher quota in Service Quotas (more keys do not help: the quota is shared by every RSA key of the account and region)' },
    { limit: 'Lambda concurrency (all functions of the account and region)', quota: `${n(QUOTAS.lambdaConcurrency)}`,
      bindsAtMau: QUOTAS.lambdaConcurrency / concurrency,
      then: 'ask for a higher concurrency quota (free); reserve concurrency for the token endpoint so polls cannot starve it' },
    { limit: `DynamoDB partition of the most popular client item (the token endpoint reads it once per ${CLIENT_CACHE_SECONDS} s per instance, and on each call presenting another secret than its current one)`,
      quota: `${n(QUOTAS.dynamoDbPartitionReadUnits)} RRU/s for one item`,
      bindsAtMau: QUOTAS.dynamoDbPartitionReadUnits / (tokenConcurrency / CLIENT_CACHE_SECONDS),
      then: 'no quota to raise (one item never splits): an application that keeps using its previous secret after a rotation reads it on every call (1 RRU each) until it switches; reading it eventually consistent would halve that' },
    { limit: 'DynamoDB gsi1 key `FAMILIES#<client>` of the most popular client (each refresh rewrites the family\'s index entry)',
      quota: `${n(QUOTAS.dynamoDbPartitionWriteUnits)} WRU/s per partition`,
      bindsAtMau: QUOTAS.dynamoDbPartitionWriteUnits / tokens,
      then: 'DynamoDB may split the key by sort key (one entry per family); if gsi1 throttles (KeyRangeThroughputExceeded), shard the key (`FAMILIES#<client>#<n>`) or stop projecting `activeTokenHash`' },
    { limit: 'SES sending quota (messages per 24 h)', quota: `${n(QUOTAS.sesPerDay)}/day (a new production account; 200 in the sandbox)`,
      bindsAtMau: QUOTAS.sesPerDay / mailsPerDay, then: 'request a higher sending quota in the SES console' },
  ];
  return list.sort((a, b) => a.bindsAtMau - b.bindsAtMau);
}

// --- Push instead of polling (webhooks) -------------------------------------------------------

/** The webhook pipeline's figures per delivered event, from `npm run bench:webhooks` (bench/RESULTS.md, or the `webhooks` section of bench-results.json). */
export interface WebhookMeasured {
  /** DynamoDB requests per delivered event, of each function. */
  dynamodbRequestsPerEvent: { fanOut: number; deliver: number };
  /** Handler milliseconds per delivered event, of each function (against DynamoDB Local, receiver on loopback). */
  lambdaMsPerEvent: { fanOut: number; deliver: number };
  /** Invocations per delivered event, of each function (a stream batch, an SQS batch of up to 10). */
  invocationsPerEvent: { fanOut: number; deliver: number };
}

/**
 * What push assumes, per monthly active user: the app stops polling `GET /devices` (its openings,
 * `GET /user`, `GET /devices/{id}` and refreshes stay) and receives device events instead.
 */
export const PUSH = {
  devicesPerUser: 3,
  /** Device events (changes through the API, by other applications, connection flips) per device and day. */
  eventsPerDevicePerDay: 4,
  /** Applications of a user holding `read_device`, and the share of them with a webhook: deliveries per event = their product. */
  appsPerUser: 2, subscribedShare: 0.75,
  /** Attempts beyond the first, per delivery (receivers answering 5xx or timing out); each one a delivery's share of an invocation, its requests, an SQS receive and a visibility change. */
  retriesPerDelivery: 0.05,
  /** The receiver's answer time, which the delivery waits for (billed, and concurrency). */
  receiverMs: 150,
  /** A delivery item (payload and attempt record), kept 30 days. */
  deliveryItemBytes: 900,
  /** Lambda's pollers long-poll the delivery queue even when it is idle: about 5 pollers × 3 receives a minute. */
  sqsIdleReceivesPerMonth: 5 * 3 * 60 * 24 * 30,
};

/** Deliveries (events × subscribed applications) per user and month. */
export function deliveriesPerUserMonth(push = PUSH, usage = USAGE): number {
  return push.devicesPerUser * push.eventsPerDevicePerDay * usage.daysPerMonth * push.appsPerUser * push.subscribedShare;
}

/**
 * What one delivered event costs AWS, from the bench's figures: Lambda milliseconds (the handler's,
 * plus the in-region round trip of each DynamoDB request, plus the receiver's answer shared by the
 * messages of a batch; a retry repeats the delivery's part), invocations, request units (the
 * fan-out's delivery write, a TransactWriteItems of the delivery and a ConditionCheck of the consent or
 * webhook, is 2 items at 2 WRU each, and its other requests, a Query of the owner's consents and a
 * BatchGetItem of subscriptions, at most 1 RRU each; the delivery's UpdateItem 1 WRU and its other
 * request, a strongly consistent BatchGetItem of delivery, subscription and consent, 3 RRU), SQS
 * requests (one send, batched by up to 10 in one request; per attempt one receive and one delete or
 * visibility change, counted unbatched) and log bytes (one record per invocation, no access log).
 */
export function perDelivery(w: WebhookMeasured, push = PUSH) {
  const attempts = 1 + push.retriesPerDelivery;
  const fanOutMs = w.lambdaMsPerEvent.fanOut + w.dynamodbRequestsPerEvent.fanOut * RUNTIME.dynamoDbExtraMs;
  const deliverMs = (w.lambdaMsPerEvent.deliver + w.dynamodbRequestsPerEvent.deliver * RUNTIME.dynamoDbExtraMs
    + push.receiverMs * w.invocationsPerEvent.deliver) * attempts;
  const invocations = w.invocationsPerEvent.fanOut + w.invocationsPerEvent.deliver * attempts;
  return {
    lambdaMs: fanOutMs + deliverMs, invocations,
    rru: Math.max(w.dynamodbRequestsPerEvent.fanOut - 1, 0) + Math.max(w.dynamodbRequestsPerEvent.deliver - 1, 0) * 3 * attempts,
    wru: 4 + attempts,
    /** The part written in the application's `DELIVERIES#` partition: the transaction's delivery (2 WRU), each attempt's UpdateItem. */
    deliveriesPartitionWru: 2 + attempts,
    sqsRequests: 0.1 + 2 * attempts,
    logBytes: invocations * (RUNTIME.logBytesPerCall - 280),
  };
}

export interface PushCost {
  /** The bill of the service without the polls (MonthlyCost with `GET /devices` never called). */
  api: MonthlyCost;
  deliveries: number;
  lines: Record<'lambda' | 'dynamoDb' | 'sqs' | 'logs' | 'streams', number>;
  total: number;
}

/** The monthly bill at `mau` when apps receive device events instead of polling. */
export function pushMonthlyCost(mau: number, measured: readonly Measured[], w: WebhookMeasured, push = PUSH, usage = USAGE, prices = PRICES): PushCost {
  const api = monthlyCost(mau, measured, { ...usage, pollSeconds: Infinity }, prices);
  const deliveries = mau * deliveriesPerUserMonth(push, usage);
  const d = perDelivery(w, push);
  const lines = {
    lambda: deliveries * (d.invocations * prices.lambdaRequestsPerMillion / 1e6 + d.lambdaMs / 1000 * RUNTIME.memoryMb / 1024 * prices.lambdaArmPerGbSecond),
    dynamoDb: deliveries * (d.rru * prices.dynamoDbPerMillionReadUnits + d.wru * prices.dynamoDbPerMillionWriteUnits) / 1e6
      + deliveries * push.deliveryItemBytes / 1e9 * (prices.dynamoDbStoragePerGbMonth + prices.dynamoDbPitrPerGbMonth),
    sqs: (deliveries * d.sqsRequests + push.sqsIdleReceivesPerMonth) * prices.sqsPerMillion / 1e6,
    logs: deliveries * d.logBytes / 1e9 * (prices.logsIngestionPerGb + prices.logsStoragePerGbMonth),
    streams: prices.dynamoDbStreamsLambdaReads,
  };
  return { api, deliveries, lines, total: api.total + Object.values(lines).reduce((a, b) => a + b, 0) };
}

/**
 * The limits that bind with push, in order: those of the service without polls, and the webhook
 * pipeline's own: the partition of the most popular application's deliveries (`DELIVERIES#<clientId>`,
 * one PutItem and one UpdateItem per attempt on one partition key, whose sort key grows with time,
 * so DynamoDB cannot split it for heat), and Lambda concurrency with the deliveries waiting on receivers.
 */
export function pushBindingLimits(measured: readonly Measured[], w: WebhookMeasured, push = PUSH, usage = USAGE): Binding[] {
  const noPolls = { ...usage, pollSeconds: Infinity };
  const api = bindingLimits(measured, noPolls).filter((b) => Number.isFinite(b.bindsAtMau) && !b.limit.startsWith('Lambda concurrency'));
  const perUserPerSecond = deliveriesPerUserMonth(push, usage) / SECONDS_PER_MONTH * usage.peakFactor;
  const eventsPerUserPerSecond = perUserPerSecond / (push.appsPerUser * push.subscribedShare);
  const d = perDelivery(w, push);
  const perUser = peakRps(1, noPolls);
  const apiConcurrency = measured.reduce((sum, m) => sum + (perUser[m.scenario] ?? 0) * perCall(m).awsMs / 1000, 0);
  const webhooks: Binding[] = [
    { limit: 'DynamoDB partition `DELIVERIES#<clientId>` of the most popular application (every owner\'s events, if all its users granted it)',
      quota: `${n(QUOTAS.dynamoDbPartitionWriteUnits)} WRU/s per partition`,
      bindsAtMau: QUOTAS.dynamoDbPartitionWriteUnits / (eventsPerUserPerSecond * d.deliveriesPartitionWru),
      then: 'shard the key (`DELIVERIES#<clientId>#<n>`, n from the webhook id; the console queries the shards) before a popular application reaches it' },
    { limit: 'Lambda concurrency with push (API functions, fan-out, deliveries waiting on receivers)', quota: `${n(QUOTAS.lambdaConcurrency)}`,
      bindsAtMau: QUOTAS.lambdaConcurrency / (apiConcurrency + perUserPerSecond * d.lambdaMs / 1000),
      then: 'ask for a higher concurrency quota; the delivery function is capped at 100 (`DELIVERY_MAX_CONCURRENCY`), so slow receivers cannot starve the API' },
  ];
  return [...api, ...webhooks].sort((a, b) => a.bindsAtMau - b.bindsAtMau);
}

/** The figures of the webhook bench's printed table in bench/RESULTS.md (section "Webhook pipeline"). */
export function parseWebhookResultsMarkdown(text: string): WebhookMeasured {
  const section = text.slice(text.indexOf('## Webhook pipeline'));
  if (!text.includes('## Webhook pipeline')) throw new Error('bench/RESULTS.md: no "## Webhook pipeline" section');
  const value = (label: string, after = 0) => {
    const at = section.indexOf(`| ${label}`, after);
    const match = at < 0 ? null : /\|\s*([\d.]+)\s*\|/.exec(section.slice(at + label.length + 2));
    if (!match) throw new Error(`bench/RESULTS.md: no webhook figure ${JSON.stringify(label)}`);
    return { value: Number(match[1]), at };
  };
  const requests = value('DynamoDB requests per delivered event');
  const ms = value('Lambda ms per delivered event (both)');
  return {
    dynamodbRequestsPerEvent: { fanOut: value('  of which fan-out-events', requests.at).value, deliver: value('  of which deliver-webhooks', requests.at).value },
    lambdaMsPerEvent: { fanOut: value('  of which fan-out-events', ms.at).value, deliver: value('  of which deliver-webhooks', ms.at).value },
    invocationsPerEvent: { fanOut: value('Invocations per delivered event, fan-out').value, deliver: value('Invocations per delivered event, delivery').value },
  };
}

/** The same figures from the `webhooks` section of bench-results.json, or undefined when the file has none. */
export function webhookMeasuredFromJson(json: any): WebhookMeasured | undefined {
  const w = json?.webhooks;
  if (!w) return undefined;
  return { dynamodbRequestsPerEvent: w.dynamodbRequestsPerEvent, lambdaMsPerEvent: w.lambdaMsPerEvent, invocationsPerEvent: w.invocationsPerEvent };
}

// --- Output ------------------------------------------------------------------------------------

const usd = (n: number) => (n >= 100 ? `$${Math.round(n).toLocaleString('en-US')}` : `$${n.toFixed(2)}`);
const users = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(1)} M` : n >= 1e3 ? `${Math.round(n / 1e3)} k` : String(Math.round(n)));

/** The Markdown tables of docs/operations.md, from the model. */
export function renderTables(measured: readonly Measured[], webhooks?: WebhookMeasured): string {
  const sizes = [1_000, 100_000, 1_000_000];
  const costs = sizes.map((mau) => monthlyCost(mau, measured));
  const cognito = sizes.map((mau) => cognitoCost(mau));
  const row = (label: string, values: string[]) => `| ${label} | ${values.join(' | ')} |`;
  const out = [
    `Monthly cost (USD, us-east-1, prices checked ${PRICES.checked}):`,
    '',
    row('', sizes.map((n) => `${users(n)} MAU`)),
    row('---', sizes.map(() => '---:')),
    row('Requests a month', costs.map((c) => `${n(+(c.requests / 1e6).toFixed(1))} M`)),
    row('API Gateway (HTTP API)', costs.map((c) => usd(c.lines.apiGateway))),
    row('Lambda (requests and duration, arm64, 512 MB)', costs.map((c) => usd(c.lines.lambda))),
    row('DynamoDB (request units, storage, PITR)', costs.map((c) => usd(c.lines.dynamoDb))),
    row('KMS (key and Sign requests)', costs.map((c) => usd(c.lines.kms))),
    row('CloudWatch Logs (ingestion, 30 days kept)', costs.map((c) => usd(c.lines.logs))),
    row('SES (e-mails)', costs.map((c) => usd(c.lines.ses))),
    row('**Total**', costs.map((c) => `**${usd(c.total)}**`)),
    row('of which the resource API', costs.map((c) => usd(c.resourceApi))),
    row('of which the authorization server', costs.map((c) => usd(c.authServer))),
    row('Per user and month', costs.map((c) => `$${(c.total / c.mau).toFixed(4)}`)),
    row('Cognito Lite, same MAU (auth only)', cognito.map((c) => usd(c.lite))),
    row('Cognito Essentials, same MAU (auth only)', cognito.map((c) => usd(c.essentials))),
    row('Cognito Plus, same MAU (auth only)', cognito.map((c) => usd(c.plus))),
    row('Resource API + Cognito Lite', costs.map((c, i) => usd(c.resourceApi + cognito[i]!.lite))),
    row('Resource API + Cognito Essentials', costs.map((c, i) => usd(c.resourceApi + cognito[i]!.essentials))),
    '',
    'Limits in the order they bind (busiest hour):',
    '',
    '| Limit | Quota | Binds at | Then |',
    '|---|---|---:|---|',
    ...bindingLimits(measured).map((b) => `| ${b.limit} | ${b.quota} | ${users(b.bindsAtMau)} MAU | ${b.then} |`),
  ];
  if (webhooks) out.push('', renderPushTables(measured, webhooks));
  return out.join('\n');
}

/** Polling against push at 1 million users, side by side, and the limits that bind with push. */
export function renderPushTables(measured: readonly Measured[], webhooks: WebhookMeasured, mau = 1_000_000): string {
  const poll = monthlyCost(mau, measured);
  const push = pushMonthlyCost(mau, measured, webhooks);
  const row = (label: string, a: string, b: string) => `| ${label} | ${a} | ${b} |`;
  const aws = (b: Binding) => !b.limit.startsWith('Route throttle');
  const first = (list: Binding[]) => `${list[0]!.limit}, at ${users(list[0]!.bindsAtMau)} MAU`;
  const pollLimits = bindingLimits(measured);
  const pushLimits = pushBindingLimits(measured, webhooks);
  const d = perDelivery(webhooks);
  return [
    `Polling or push at ${users(mau)} MAU (USD a month; push: the app receives device events instead of polling \`GET /devices\`):`,
    '',
    row('', 'Polling every 60 s', 'Push (webhooks)'),
    '| --- | ---: | ---: |',
    row('API requests a month', `${n(+(poll.requests / 1e6).toFixed(1))} M`, `${n(+(push.api.requests / 1e6).toFixed(1))} M`),
    row('Webhook deliveries a month', '0', `${n(+(push.deliveries / 1e6).toFixed(1))} M`),
    row('API Gateway (HTTP API)', usd(poll.lines.apiGateway), usd(push.api.lines.apiGateway)),
    row('Lambda, API functions', usd(poll.lines.lambda), usd(push.api.lines.lambda)),
    row('Lambda, fan-out and delivery', '$0.00', usd(push.lines.lambda)),
    row('DynamoDB (API: request units, storage, PITR)', usd(poll.lines.dynamoDb), usd(push.api.lines.dynamoDb)),
    row('DynamoDB (delivery items: request units, storage, PITR)', '$0.00', usd(push.lines.dynamoDb)),
    row('DynamoDB Streams (read by a Lambda trigger)', '$0.00', usd(push.lines.streams)),
    row('SQS (delivery queue)', '$0.00', usd(push.lines.sqs)),
    row('KMS, SES', usd(poll.lines.kms + poll.lines.ses), usd(push.api.lines.kms + push.api.lines.ses)),
    row('CloudWatch Logs', usd(poll.lines.logs), usd(push.api.lines.logs + push.lines.logs)),
    row('**Total**', `**${usd(poll.total)}**`, `**${usd(push.total)}**`),
    row('First limit to bind', first(pollLimits), first(pushLimits)),
    row('First AWS quota to bind', first(pollLimits.filter(aws)), first(pushLimits.filter(aws))),
    '',
    `Per delivered event in AWS (from the webhook benchmark): ${d.lambdaMs.toFixed(1)} billed Lambda ms, ${d.invocations.toFixed(3)} invocations, `
      + `${+d.rru.toFixed(2)} RRU, ${+d.wru.toFixed(2)} WRU, ${+d.sqsRequests.toFixed(2)} SQS requests.`,
    '',
    'Limits in the order they bind with push (busiest hour):',
    '',
    '| Limit | Quota | Binds at | Then |',
    '|---|---|---:|---|',
    ...pushLimits.map((b) => `| ${b.limit} | ${b.quota} | ${users(b.bindsAtMau)} MAU | ${b.then} |`),
  ].join('\n');
}

export const RESULTS_MD = 'bench/RESULTS.md';
export const OPERATIONS_MD = 'docs/operations.md';
export const BEGIN = '<!-- cost-model:begin (npm run cost -- --write) -->';
export const END = '<!-- cost-model:end -->';

/** `page` with the block between BEGIN and END replaced by `tables`. */
export function withTables(page: string, tables: string): string {
  const start = page.indexOf(BEGIN), end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${OPERATIONS_MD}: no ${BEGIN} … ${END} block`);
  return `${page.slice(0, start + BEGIN.length)}\n${tables}\n${page.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const json = args.indexOf('--results');
  const results = json >= 0 ? JSON.parse(readFileSync(resolve(args[json + 1]!), 'utf8')) : undefined;
  const printed = readFileSync(RESULTS_MD, 'utf8');
  const measured = results ? measuredFromJson(results) : parseResultsMarkdown(printed);
  // The webhook figures of the same file if `npm run bench:webhooks` wrote them there, else the printed ones.
  const webhooks = webhookMeasuredFromJson(results) ?? parseWebhookResultsMarkdown(printed);
  const tables = renderTables(measured, webhooks);
  if (args.includes('--write')) {
    writeFileSync(OPERATIONS_MD, withTables(readFileSync(OPERATIONS_MD, 'utf8'), tables));
    console.log(`${OPERATIONS_MD} updated`);
  } else {
    console.log(tables);
  }
}
