import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { AWS_ENV, ENV, MAIL_ENV } from '#shared/config';
import { createLocalSigner } from '#shared/keys/local-signer';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { sessionKey, userKey } from '#shared/data/item-keys';
import { UpdateCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import { hashSecret } from '#shared/secrets';
import { epochSeconds } from '#shared/domain/time';
import { createTable, startDynamoDbLocal, type DynamoDbLocal } from '#local/dynamodb-local';
import { DEMO_CLIENT, DEMO_USERS, seedDemoData } from '#local/seed';
import { setClientHook } from '#shared/aws/client-config';
import { endpointOf, FALLBACK_FUNCTION, FUNCTIONS, type FunctionName } from '#functions/registry';
import {
  BASELINE_ENTRY, BASELINE_NAME, bundleAll, FLOOR_ENTRY, FLOOR_KMS_ENTRY, FLOOR_KMS_NAME, FLOOR_LAZY_MODULES, FLOOR_NAME, FLOOR_QUEUE_ENTRY,
  FLOOR_QUEUE_NAME, OUT_DIR, ROOT,
} from './bundle.ts';
import { measureColdStarts, type ColdStartResult, type ColdStartTarget } from './cold-start.ts';
import { bundleOldPath, checkOldPathBundles, oldPathName, oldPathTargets, OLD_PATH_SUBJECTS, renderOldPath, summarizeOldPath, type OldPathSection } from './cold-start-old-path.ts';
import type { FloorStep } from '#shared/bench-floor';
import { createFloors, floorLabel, floorLibrary, floorRequests } from './floors.ts';
import { apiOf, BENCHED, isResourceFunction, triggerOf } from './functions.ts';
import { startWebhookEnds } from './webhook-ends.ts';
import { parseOptions } from './options.ts';
import { BUDGETS, check, fmt, outcome, table, verdict, type BudgetCheck } from './report.ts';
import { median, round } from './stats.ts';
import { measureClientAuthentication, measureSigning, measureTokenThroughput } from './token-endpoint.ts';
import type { HandlerResult } from './scenarios.ts';
import type { WarmResult } from './warm.ts';
import { comparePeer } from './peer/compare.ts';
import { latencyPlot } from './peer/plot.ts';
import { peerSection, renderPeer, type PeerSection } from './peer/report.ts';
import { PeerMissingError, peerVersion } from './peer/servers.ts';
import { compareAsUsers } from './peer/as-users.ts';
import { asUsersSection, renderAsUsers } from './peer/as-users-report.ts';
import { IDLE_BUDGET_PERCENT } from './peer/npm-start.ts';

// `npm run bench [-- --quick] [--informational] [--functions a,b]`: bundle sizes, cold starts, warm latency, DynamoDB requests per call
// and token endpoint throughput of every declared function (functions/registry.ts), each as a ratio to a reference
// measured in the same run: the bundle to the baseline, the cold start to the function's floor.
// Prints a table and writes bench-results.json (schema: bench/RESULTS.md).
// Budgets are reported as PASS/FAIL; a failed budget makes the exit status 1 unless --informational.

const options = parseOptions(process.argv.slice(2));
const startedAt = new Date();
const progress = (message: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);

// Stand-ins for the two API Gateway endpoints the stack passes to the functions.
const AUTH_URL = 'https://auth.example.com';
const API_URL = 'https://api.example.com';
const TABLE = 'bench-device-user-service';
/**
 * The preparation client's limits: on this shared 2-core machine a seeding request can wait longer than
 * the service's 1 s per attempt; the functions' own clients keep the service's limits.
 */
const SETUP_LIMITS = { requestTimeoutMs: 30_000 };
/** The functions measured: every declared function (bench/functions.ts), or those of `--functions`. */
const MEASURED: readonly FunctionName[] = options.functions ?? BENCHED;
const resourceSized = (fn: FunctionName) => isResourceFunction(fn) || fn === FALLBACK_FUNCTION;

const stateDir = mkdtempSync(join(tmpdir(), 'dus-bench-'));
let ddb: DynamoDbLocal | undefined;
const cleanups: (() => void)[] = [];
const stopAll = async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try { cleanup(); } catch { /* best effort */ }
  }
  await ddb?.stop();
  ddb = undefined;
  rmSync(stateDir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}

try {
  const budgets = await main();
  await stopAll();
  const { exitCode, message } = outcome(budgets, options.informational);
  progress(options.peerOnly && !options.asUsers ? 'peer comparison done (it carries no budget).' : message);
  process.exit(exitCode);
} catch (error) {
  process.stderr.write(error instanceof PeerMissingError ? `bench: ${error.message}\n` : `bench failed: ${(error as Error).stack ?? String(error)}\n`);
  await stopAll().catch(() => undefined);
  process.exit(1);
}

/** The machine, as every results file names it. */
function machine() {
  return {
    cpu: cpus()[0]?.model ?? 'unknown', cpuCount: cpus().length, memoryGiB: round(totalmem() / 2 ** 30, 1),
    os: `${process.platform} ${release()}`, node: process.version,
  };
}

/**
 * Ours against the peer (bench/peer/): the plot is written to bench/peer-latency.svg by a full or
 * `--peer` run (committed with the figures), to bench/.out/ by a quick one (its figures are noise).
 */
async function peerComparison(local: DynamoDbLocal, keyFile: string): Promise<PeerSection> {
  const comparison = await comparePeer({ endpoint: local.endpoint, dynamodbPid: local.pid, table: TABLE, keyFile, audience: API_URL }, options.peer, progress);
  const plot = options.quick ? join('bench', '.out', 'peer-latency.svg') : join('bench', 'peer-latency.svg');
  mkdirSync(join(ROOT, 'bench', '.out'), { recursive: true });
  const m = machine();
  writeFileSync(join(ROOT, plot), latencyPlot(comparison, `${options.quick ? 'quick' : 'full'} run, ${startedAt.toISOString()}, ${m.cpu} ×${m.cpuCount}, Node ${m.node}`));
  return peerSection(comparison, plot);
}

/** `--peer`: DynamoDB Local with the demo data, a signing key, and the comparison alone. */
async function peerOnly(): Promise<BudgetCheck[]> {
  if (options.asUsers) return peerAsUsers(options.asUsers);
  progress(`mode ${options.quick ? 'quick' : 'full'}, peer comparison only; starting DynamoDB Local`);
  ddb = await startDynamoDbLocal();
  await createTable(ddb.endpoint, TABLE);
  const setupDoc = createDocumentClient({ endpoint: ddb.endpoint, limits: SETUP_LIMITS });
  cleanups.push(() => setupDoc.destroy());
  await seedDemoData(setupDoc, TABLE);
  const keyFile = join(stateDir, 'signing-key.pem');
  createLocalSigner(keyFile);
  const peer = await peerComparison(ddb, keyFile);
  const results = {
    schemaVersion: 2,
    mode: options.quick ? 'quick-peer' : 'peer',
    startedAt: startedAt.toISOString(),
    durationSeconds: round((Date.now() - startedAt.getTime()) / 1000, 1),
    machine: machine(),
    peer,
  };
  writeFileSync(join(ROOT, 'bench-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\n${renderPeer(peer)}\n`);
  progress(`wrote bench-results.json and ${peer.plot}`);
  return [];
}

/** `--peer --as-users`: npm start and the peer beside it (bench/peer/as-users.ts); npm start stops itself, whatever happens. */
async function peerAsUsers(counts: NonNullable<typeof options.asUsers>): Promise<BudgetCheck[]> {
  progress(`mode ${options.quick ? 'quick' : 'full'}, peer comparison as users run the service`);
  const load = { before: loadavg().map((v) => round(v, 2)), after: [] as number[] };
  const comparison = await compareAsUsers(stateDir, counts, progress);
  load.after = loadavg().map((v) => round(v, 2));
  const peerAsUsers = asUsersSection(comparison, load);
  const results = {
    schemaVersion: 2, mode: options.quick ? 'quick-peer-as-users' : 'peer-as-users', startedAt: startedAt.toISOString(),
    durationSeconds: round((Date.now() - startedAt.getTime()) / 1000, 1), machine: machine(), peerAsUsers,
  };
  writeFileSync(join(ROOT, 'bench-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\n${renderAsUsers(peerAsUsers)}\n`);
  progress('wrote bench-results.json');
  // The idle figure is a budget (CPU seconds, which a busy machine changes little); the ratios are not (bench/RESULTS.md).
  return Object.entries(peerAsUsers.idle).flatMap(([when, figure]) => (typeof figure === 'object' && figure
    ? [check('idle-cpu-percent', `npm start ${when} the rounds`, 'npm start left alone: CPU of its process group, % of one core', figure.percentOfOneCore, IDLE_BUDGET_PERCENT)]
    : []));
}

async function main(): Promise<BudgetCheck[]> {
  // Before anything starts: the peer must be installed (the message says how).
  peerVersion();
  if (options.peerOnly) return peerOnly();
  const selection = options.functions ? `, measuring ${options.functions.join(', ')} only` : '';
  progress(`mode ${options.quick ? 'quick' : 'full'}${selection}; bundling ${Object.keys(FUNCTIONS).length} functions, the baseline and the floors`);
  const entries: Record<string, string> = {
    [BASELINE_NAME]: BASELINE_ENTRY, [FLOOR_NAME]: FLOOR_ENTRY, [FLOOR_QUEUE_NAME]: FLOOR_QUEUE_ENTRY, [FLOOR_KMS_NAME]: FLOOR_KMS_ENTRY,
  };
  for (const [fn, def] of Object.entries(FUNCTIONS)) entries[fn] = def.entry;
  const lazyModules: Record<string, readonly string[]> = { [FLOOR_NAME]: FLOOR_LAZY_MODULES };
  for (const [fn, def] of Object.entries(FUNCTIONS)) if (def.lazyModules) lazyModules[fn] = def.lazyModules;
  const bundles = await bundleAll(entries, { lazyModules });
  const oldBundles = await bundleOldPath({ baseline: BASELINE_ENTRY, 'get-user': endpointOf('get-user').entry });
  for (const subject of OLD_PATH_SUBJECTS) checkOldPathBundles(bundles.get(subject)!, oldBundles.get(oldPathName(subject))!);
  const baselineBytes = bundles.get(BASELINE_NAME)!.bytes;
  const floorBundle = bundles.get(FLOOR_NAME)!;
  /** The floor bundle a floor runs as: with the SQS or the KMS client library where a step needs it (floorLibrary). */
  const floorBundleOf = (steps: readonly FloorStep[]) => {
    const library = floorLibrary(steps);
    return bundles.get(library === 'sqs' ? FLOOR_QUEUE_NAME : library === 'kms' ? FLOOR_KMS_NAME : FLOOR_NAME)!;
  };

  progress('starting DynamoDB Local');
  ddb = await startDynamoDbLocal();
  await createTable(ddb.endpoint, TABLE);
  const setupDoc = createDocumentClient({ endpoint: ddb.endpoint, limits: SETUP_LIMITS });
  cleanups.push(() => setupDoc.destroy());
  await seedDemoData(setupDoc, TABLE);
  const keyFile = join(stateDir, 'signing-key.pem');
  createLocalSigner(keyFile); // created once here, read by every process
  // The delivery queue (the local SQS stand-in) and a receiver, for the webhook pipeline's two functions.
  const webhookEnds = await startWebhookEnds();
  cleanups.push(() => void webhookEnds.stop());

  // The environment the stack gives every function, locally: DynamoDB Local instead of the AWS
  // endpoint and the key file instead of KMS (SIGNING_KEY_ID unset), mail to an outbox instead of SES.
  const functionEnv: Record<string, string> = {
    [ENV.tableName]: TABLE,
    [ENV.issuer]: AUTH_URL,
    [ENV.audience]: API_URL,
    [ENV.dynamodbEndpoint]: ddb.endpoint,
    [ENV.localSigningKeyFile]: keyFile,
    [MAIL_ENV.outboxDir]: join(stateDir, 'outbox'),
  };
  delete process.env[ENV.signingKeyId];
  // In this process (warm calls) the webhook pipeline's handlers are loaded too: they need the queue's variables.
  Object.assign(process.env, functionEnv, webhookEnds.env, { [AWS_ENV.region]: 'eu-west-1' });

  // Handler modules read the environment when they load: only now may they be imported.
  const { createScenarios, loadHandler, RUNTIME_CLIENTS, unexpectedAnswer } = await import('./scenarios.ts');
  const { attachCounters, measureWarm } = await import('./warm.ts');
  const created = createScenarios({ endpoint: ddb.endpoint, table: TABLE, authUrl: AUTH_URL, apiUrl: API_URL, keyFile, webhookEnds });
  const { close } = created;
  const scenarios = created.scenarios.filter((s) => MEASURED.includes(s.fn));
  cleanups.push(close);
  cleanups.push(() => RUNTIME_CLIENTS.forEach((doc) => doc.destroy()));

  // The first scenario of each function is the one its cold start serves, and its floor the reference.
  const firstScenario = (fn: FunctionName) => scenarios.find((s) => s.fn === fn)!;
  const floorOf = (fn: FunctionName) => firstScenario(fn).floor ?? [];
  const floors = createFloors(setupDoc, TABLE, { receiverUrl: `${webhookEnds.receiverOrigin}/floor` });
  await floors.prepare(scenarios.map((s) => s.floor ?? []));
  const floorTarget = (fn: FunctionName) => `${FLOOR_NAME}:${fn}`;

  // Cold start: fresh processes, each with its own event (a run may consume a token or session).
  const eventsDir = join(stateDir, 'events');
  mkdirSync(eventsDir);
  const eventPaths = (name: string, count: number) => Array.from({ length: count }, (_, i) => join(eventsDir, `${name.replace(':', '-')}-${i}.json`));
  const writeEvents = (name: string, events: unknown[]) => eventPaths(name, events.length).map((file, i) => {
    writeFileSync(file, JSON.stringify(events[i]));
    return file;
  });
  /** The webhook pipeline's functions (and their floors) also get the queue's variables, as the stack sets for them. */
  const lambdaEnv = (fn: string, pipeline = false) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...functionEnv,
    ...(pipeline ? webhookEnds.env : {}),
    [AWS_ENV.region]: 'eu-west-1',
    AWS_LAMBDA_FUNCTION_NAME: fn,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  });
  progress(`preparing cold start events (${options.coldRuns} per function)`);
  const targets: ColdStartTarget[] = [{
    name: BASELINE_NAME,
    bundleFile: bundles.get(BASELINE_NAME)!.file,
    eventFiles: writeEvents(BASELINE_NAME, [{ key: userKey(DEMO_USERS[0].user.id) }]),
    env: lambdaEnv('baseline'),
  }];
  for (const fn of MEASURED) {
    const pipeline = endpointOf(fn).eventSource !== undefined;
    targets.push({
      name: fn, group: fn, bundleFile: bundles.get(fn)!.file, eventFiles: eventPaths(fn, options.coldRuns), env: lambdaEnv(fn, pipeline),
      // Made just before each run: a full run's cold starts outlast a pending sign-in (5 minutes), a
      // recent sign-in (10), a code (10), which an event made at the start would carry.
      // A page that asks for a recent sign-in may share one session across runs: it is signed in anew.
      beforeRun: async (eventFile: string) => {
        const [event] = await firstScenario(fn).events(1);
        writeFileSync(eventFile, JSON.stringify(event));
        if (endpointOf(fn).recentSignIn) await renewSignIns(setupDoc, event as { cookies?: string[] });
      },
    });
    targets.push({
      name: floorTarget(fn), group: fn, bundleFile: floorBundleOf(floorOf(fn)).file, eventFiles: writeEvents(floorTarget(fn), await floors.events(floorOf(fn), options.coldRuns)),
      env: lambdaEnv(FLOOR_NAME, pipeline),
    });
  }
  // The old path is measured on get-user's bundle: only in a run that measures it.
  const withOldPath = MEASURED.includes('get-user');
  if (withOldPath) targets.push(...oldPathTargets(targets, oldBundles));
  let lastReported = 0;
  const cold = await measureColdStarts(targets, options.coldRuns, (done, total) => {
    if (done === total || Date.now() - lastReported > 10_000) {
      lastReported = Date.now();
      progress(`cold starts ${done}/${total}`);
    }
  });
  const baselineCold = cold.get(BASELINE_NAME)!;
  for (const fn of MEASURED) {
    const scenario = firstScenario(fn);
    const expected = scenario.expectStatus;
    const { statuses, results } = cold.get(fn)!;
    if (expected !== undefined && statuses.some((s) => s !== expected)) {
      throw new Error(`cold start of ${fn} answered ${statuses.join(', ')}, expected ${expected}`);
    }
    if (scenario.expectResult) {
      for (const result of results) {
        const unexpected = unexpectedAnswer({ expectResult: scenario.expectResult }, result as HandlerResult);
        if (unexpected) throw new Error(`cold start of ${fn} ${unexpected}`);
      }
    }
    scenario.afterColdStarts?.(options.coldRuns);
    const floorStatuses = cold.get(floorTarget(fn))!.statuses;
    if (floorStatuses.some((s) => s !== 200)) throw new Error(`cold start of ${fn}'s floor answered ${floorStatuses.join(', ')}`);
  }

  // Warm latency, in this process. Logs go where Lambda's go (a pipe), here /dev/null.
  const counters = attachCounters(RUNTIME_CLIENTS);
  const warm = new Map<string, WarmResult>();
  const restoreStdout = sinkStdout();
  let token: Awaited<ReturnType<typeof tokenEndpoint>> | undefined;
  try {
    for (const scenario of scenarios) {
      progress(`warm: ${scenario.name}`);
      // A DynamoDB client a handler module made for itself at load would be counted too (none does: shared/runtime.ts has the one).
      setClientHook((client) => {
        if ((client as { config?: { serviceId?: string } }).config?.serviceId === 'DynamoDB') counters.add(client as Parameters<typeof counters.add>[0]);
      });
      const handler = await loadHandler(scenario.fn).finally(() => setClientHook(undefined));
      warm.set(scenario.name, await measureWarm(scenario, handler, counters, {
        warmup: options.warmupCalls,
        calls: isResourceFunction(scenario.fn) ? options.warmCallsBudgeted : options.warmCalls,
        secondsCap: options.warmSecondsCap,
      }));
    }
    // A run of some functions only (--functions) leaves out the token endpoint's figures and the peer.
    token = options.functions ? undefined : await tokenEndpoint();
  } finally {
    restoreStdout();
  }
  const peer = options.functions ? undefined : await peerComparison(ddb, keyFile);

  async function tokenEndpoint() {
    progress('token endpoint: signing, throughput, client authentication');
    const refresh = scenarios.find((s) => s.name === 'post-token (refresh)')!;
    const signCpuMs = await measureSigning(keyFile, options.signIterations);
    const throughput = await measureTokenThroughput(refresh, await loadHandler('post-token'), {
      calls: options.throughputCalls, concurrency: options.concurrency, signCpuMs,
    });
    const client = await createClientRepo({ doc: setupDoc, table: TABLE }).getClient(DEMO_CLIENT.clientId);
    if (!client) throw new Error('demo client missing');
    const clientAuth = measureClientAuthentication(client, DEMO_CLIENT.clientSecret, options.clientAuthIterations);
    return { signCpuMs, throughput, clientAuth };
  }

  // Figures, budgets, output.
  const budgets: BudgetCheck[] = [];
  const functions = MEASURED.map((fn) => {
    const bundle = bundles.get(fn)!;
    const coldStart = cold.get(fn)!;
    const bundleRatio = bundle.bytes / baselineBytes;
    const bundleLimit = resourceSized(fn) ? BUDGETS.resourceBundleRatio : BUDGETS.authBundleRatio;
    const floorCold = cold.get(floorTarget(fn))!;
    // Paired: each round ran the function and its floor back to back; the median of those ratios.
    const coldRatio = pairedRatio(coldStart.totalsMs, floorCold.totalsMs);
    const sizeCheck = check('bundle-ratio', fn, `bundle bytes ÷ baseline ≤ ${bundleLimit}`, bundleRatio, bundleLimit);
    const coldCheck = check('cold-start-ratio', fn, `cold start ÷ floor (${floorLabel(floorOf(fn))}) ≤ ${BUDGETS.coldStartRatio}`, coldRatio, BUDGETS.coldStartRatio);
    const loadCheck: BudgetCheck = {
      id: `no-network-at-load:${fn}`, subject: fn, description: 'no socket opened at module load',
      value: coldStart.socketsAtLoad.length === 0, limit: true, pass: coldStart.socketsAtLoad.length === 0,
    };
    // A local-only function (the outbox) never runs in Lambda: its cold start is shown, not budgeted.
    const deployed = !endpointOf(fn).localOnly;
    budgets.push(sizeCheck, ...(deployed ? [coldCheck] : []), loadCheck);
    const fnScenarios = scenarios.filter((s) => s.fn === fn).map((scenario) => {
      const w = warm.get(scenario.name)!;
      const p50Ratio = w.bare ? w.p50Ms / w.bare.p50Ms : undefined;
      const p99Ratio = w.bare ? w.p99Ms / w.bare.p99Ms : undefined;
      const checks: BudgetCheck[] = [];
      if (isResourceFunction(fn) && p50Ratio !== undefined && p99Ratio !== undefined) {
        checks.push(check('warm-p50-ratio', scenario.name, `warm p50 ÷ bare ${w.bare!.label} p50 ≤ ${BUDGETS.warmP50Ratio}`, p50Ratio, BUDGETS.warmP50Ratio));
        checks.push(check('warm-p99-ratio', scenario.name, `warm p99 ÷ bare ${w.bare!.label} p99 ≤ ${BUDGETS.warmP99Ratio}`, p99Ratio, BUDGETS.warmP99Ratio));
      }
      if (scenario.requestBudget !== undefined) {
        checks.push(check('requests-per-call', scenario.name, `DynamoDB requests per call ≤ ${scenario.requestBudget}`, w.requestsPerCall, scenario.requestBudget));
      }
      budgets.push(...checks);
      return {
        name: scenario.name,
        expectStatus: scenario.expectStatus ?? null,
        warm: {
          calls: w.calls, p50Ms: round(w.p50Ms, 4), p99Ms: round(w.p99Ms, 4), status: w.status, cpuMsPerCall: round(w.cpuMsPerCall, 4),
          bare: w.bare
            ? { label: w.bare.label, calls: w.bare.calls, p50Ms: round(w.bare.p50Ms, 4), p99Ms: round(w.bare.p99Ms, 4), cpuMsPerCall: round(w.bare.cpuMsPerCall, 4) }
            : null,
          /** CPU the handler spends beyond its DynamoDB requests (handler CPU − bare CPU, per call). */
          overheadCpuMsPerCall: w.bare ? round(w.cpuMsPerCall - w.bare.cpuMsPerCall, 4) : null,
          p50Ratio: p50Ratio === undefined ? null : round(p50Ratio, 4),
          p99Ratio: p99Ratio === undefined ? null : round(p99Ratio, 4),
        },
        dynamodb: {
          requestsPerCall: round(w.requestsPerCall, 4), operations: w.operations,
          minRequests: scenario.floor ? floorRequests(scenario.floor) : null, floor: scenario.floor ? floorLabel(scenario.floor) : null,
          minReason: scenario.minReason, requestBudget: scenario.requestBudget ?? null,
        },
        checks,
      };
    });
    return {
      name: fn,
      entry: endpointOf(fn).entry,
      api: apiOf(fn),
      ...(triggerOf(fn) ? { trigger: triggerOf(fn) } : {}),
      bundle: {
        bytes: bundle.bytes, ratio: round(bundleRatio, 4), limit: bundleLimit, pass: sizeCheck.pass,
        lazy: bundle.lazy.map(({ entry, bytes }) => ({ entry, bytes })),
      },
      coldStart: {
        runs: coldStart.runs, medianMs: round(coldStart.medianMs, 3), p10Ms: round(coldStart.p10Ms, 3), p90Ms: round(coldStart.p90Ms, 3),
        medianImportMs: round(coldStart.medianImportMs, 3), medianFirstCallMs: round(coldStart.medianFirstCallMs, 3),
        medianCpuMs: round(coldStart.medianCpuMs, 3),
        ratio: round(coldRatio, 4), limit: deployed ? BUDGETS.coldStartRatio : null, pass: deployed ? coldCheck.pass : null,
        cpuRatio: round(pairedRatio(coldStart.cpusMs, floorCold.cpusMs), 4),
        // Informative: against the one-GetItem baseline, whatever the function's design needs.
        baselineRatio: round(coldStart.medianMs / baselineCold.medianMs, 4),
        baselineCpuRatio: round(coldStart.medianCpuMs / baselineCold.medianCpuMs, 4),
        importRatio: round(coldStart.medianImportMs / baselineCold.medianImportMs, 4),
        socketsAtLoad: coldStart.socketsAtLoad, keyFileReadAtLoad: coldStart.keyFileReadAtLoad,
      },
      floor: {
        scenario: firstScenario(fn).name, label: floorLabel(floorOf(fn)), requests: floorRequests(floorOf(fn)), steps: floorOf(fn),
        coldStart: coldSummary(floorCold),
      },
      scenarios: fnScenarios,
    };
  });
  const clientAuthCheck = token && check('client-auth-cpu', 'post-token', `authenticateClient CPU ≤ ${BUDGETS.clientAuthCpuMs} ms`, token.clientAuth.cpuMsPerCall, BUDGETS.clientAuthCpuMs);
  if (clientAuthCheck) budgets.push(clientAuthCheck);

  const results = {
    schemaVersion: 2,
    mode: options.quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    durationSeconds: round((Date.now() - startedAt.getTime()) / 1000, 1),
    machine: machine(),
    // --functions: the functions measured (and no tokenEndpoint, peer or httpShim section).
    ...(options.functions ? { only: options.functions } : {}),
    counts: {
      coldRuns: options.coldRuns, warmupCalls: options.warmupCalls, warmCalls: options.warmCalls, warmCallsBudgeted: options.warmCallsBudgeted, warmSecondsCap: options.warmSecondsCap,
      throughputCalls: options.throughputCalls, concurrency: options.concurrency, clientAuthIterations: options.clientAuthIterations,
    },
    baseline: {
      entry: BASELINE_ENTRY,
      bundleBytes: baselineBytes,
      coldStart: coldSummary(baselineCold),
    },
    floor: {
      entry: FLOOR_ENTRY, bundleBytes: floorBundle.bytes,
      queue: { entry: FLOOR_QUEUE_ENTRY, bundleBytes: bundles.get(FLOOR_QUEUE_NAME)!.bytes },
      kms: { entry: FLOOR_KMS_ENTRY, bundleBytes: bundles.get(FLOOR_KMS_NAME)!.bytes },
    },
    functions,
    tokenEndpoint: token && clientAuthCheck && {
      scenario: 'post-token (refresh)',
      localSigningCpuMs: round(token.signCpuMs, 4),
      throughput: token.throughput.map((t) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, round(v, 4)]))),
      clientAuthentication: {
        iterations: token.clientAuth.iterations,
        cpuMsPerCall: round(token.clientAuth.cpuMsPerCall, 5),
        wallMsPerCall: round(token.clientAuth.wallMsPerCall, 5),
        wrongSecretCpuMsPerCall: round(token.clientAuth.wrongSecretCpuMsPerCall, 5),
        limitMs: BUDGETS.clientAuthCpuMs,
        pass: clientAuthCheck.pass,
      },
    },
    peer,
    httpShim: withOldPath ? summarizeOldPath(cold, bundles, oldBundles) : undefined,
    budgets,
    summary: { checks: budgets.length, passed: budgets.filter((b) => b.pass).length, failed: budgets.filter((b) => !b.pass).map((b) => b.id) },
  };
  writeFileSync(join(ROOT, 'bench-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${render(results)}\n${peer ? `\n${renderPeer(peer)}\n` : ''}`);
  progress(`wrote bench-results.json; bundles in ${OUT_DIR}`);
  return budgets;
}

/** The median of per-round ratios of two targets measured in the same rounds. */
function pairedRatio(values: readonly number[], references: readonly number[]): number {
  return median(values.map((value, i) => value / references[i]!));
}

function coldSummary(c: ColdStartResult) {
  return {
    runs: c.runs, medianMs: round(c.medianMs, 3), p10Ms: round(c.p10Ms, 3), p90Ms: round(c.p90Ms, 3),
    medianImportMs: round(c.medianImportMs, 3), medianFirstCallMs: round(c.medianFirstCallMs, 3), medianBootMs: round(c.medianBootMs, 3),
    medianCpuMs: round(c.medianCpuMs, 3),
    socketsAtLoad: c.socketsAtLoad,
  };
}

type Results = {
  mode: string; startedAt: string; durationSeconds: number; machine: { cpu: string; cpuCount: number; node: string; os: string };
  baseline: { bundleBytes: number; coldStart: { medianMs: number; runs: number } };
  floor: { bundleBytes: number; queue: { bundleBytes: number }; kms: { bundleBytes: number } };
  functions: {
    name: string; bundle: { bytes: number; ratio: number; pass: boolean; lazy: { entry: string; bytes: number }[] };
    coldStart: { medianMs: number; ratio: number; pass: boolean | null; cpuRatio: number; baselineRatio: number; socketsAtLoad: string[]; keyFileReadAtLoad: boolean };
    floor: { coldStart: { medianMs: number } };
    scenarios: {
      name: string;
      warm: { calls: number; status: number | null; p50Ms: number; p99Ms: number; cpuMsPerCall: number; overheadCpuMsPerCall: number | null; bare: { label: string; p50Ms: number; p99Ms: number } | null; p50Ratio: number | null; p99Ratio: number | null };
      dynamodb: { requestsPerCall: number; operations: string[]; minRequests: number | null; floor: string | null; requestBudget: number | null };
      checks: BudgetCheck[];
    }[];
  }[];
  /** Absent from a run of some functions only (--functions), as are httpShim and peer. */
  tokenEndpoint?: {
    localSigningCpuMs: number; throughput: Record<string, number>[];
    clientAuthentication: { cpuMsPerCall: number; wrongSecretCpuMsPerCall: number; pass: boolean; limitMs: number };
  };
  httpShim?: OldPathSection;
  budgets: BudgetCheck[];
  summary: { checks: number; passed: number; failed: string[] };
};

function render(r: Results): string {
  const rows: (string | number)[][] = [];
  for (const f of r.functions) {
    f.scenarios.forEach((s, i) => {
      const first = i === 0;
      const checkOf = (id: string) => s.checks.find((c) => c.id.startsWith(`${id}:`));
      const withVerdict = (value: number | null, id: string) => (value === null ? '–' : `${value.toFixed(2)} ${verdict(checkOf(id)?.pass)}`.trim());
      const io = f.coldStart.socketsAtLoad.length ? `FAIL ${f.coldStart.socketsAtLoad.length} socket(s)` : 'none PASS';
      const requests = s.dynamodb.requestBudget !== null
        ? `${fmt(s.dynamodb.requestsPerCall, 1)} ${verdict(checkOf('requests-per-call')?.pass)}`
        : fmt(s.dynamodb.requestsPerCall, 1);
      rows.push([
        s.name.endsWith('(generic)') ? `${s.name} ${s.warm.status}` : s.name,
        first ? (f.bundle.bytes / 1024).toFixed(1) : '',
        first ? `${f.bundle.ratio.toFixed(3)} ${verdict(f.bundle.pass)}` : '',
        first ? f.coldStart.medianMs.toFixed(1) : '',
        first ? f.floor.coldStart.medianMs.toFixed(1) : '',
        first ? `${f.coldStart.ratio.toFixed(2)} ${f.coldStart.pass === null ? 'local' : verdict(f.coldStart.pass)}` : '',
        first ? f.coldStart.cpuRatio.toFixed(2) : '',
        first ? f.coldStart.baselineRatio.toFixed(2) : '',
        first ? io : '',
        `${fmt(s.warm.p50Ms)} / ${fmt(s.warm.p99Ms)}`,
        s.warm.bare ? `${fmt(s.warm.bare.p50Ms)} / ${fmt(s.warm.bare.p99Ms)}` : '–',
        withVerdict(s.warm.p50Ratio, 'warm-p50-ratio'),
        withVerdict(s.warm.p99Ratio, 'warm-p99-ratio'),
        // The handler's CPU beyond the bare requests': signed (noise can make it slightly negative).
        s.warm.overheadCpuMsPerCall === null ? fmt(s.warm.cpuMsPerCall, 3) : `${s.warm.overheadCpuMsPerCall < 0 ? '' : '+'}${fmt(s.warm.overheadCpuMsPerCall, 3)}`,
        requests,
        s.dynamodb.floor === null ? '?' : `${s.dynamodb.minRequests}: ${s.dynamodb.floor}`,
      ]);
    });
  }
  const main = table(
    [
      'function', 'bundle KiB', '÷ base', 'cold ms', 'floor ms', '÷ floor', 'CPU ÷ floor', 'cold ÷ base', 'net at load', 'warm p50/p99 ms',
      'bare p50/p99 ms', 'p50 ÷ bare', 'p99 ÷ bare', 'CPU ms/call', 'DDB req/call', 'floor: min requests and steps',
    ],
    rows,
  );
  const tokenEndpoint = (t: NonNullable<Results['tokenEndpoint']>) => {
    const tp = table(
      ['concurrency', 'calls', 'req/s', 'p50 ms', 'CPU ms/call', 'bare DDB CPU ms/call', 'CPU excl. DDB', 'excl. DDB and signing'],
      t.throughput.map((l) => [
        l.concurrency!, l.calls!, fmt(l.requestsPerSecond, 0), fmt(l.p50Ms), fmt(l.cpuMsPerCall, 3), fmt(l.bareCpuMsPerCall, 3),
        fmt(l.cpuExclDynamoDbMsPerCall, 3), fmt(l.cpuExclDynamoDbAndSigningMsPerCall, 3),
      ]),
    );
    const ca = t.clientAuthentication;
    return [
      '',
      'Token endpoint (refresh grant, in-process, DynamoDB Local):',
      tp,
      `Local RS256 signature: ${fmt(t.localSigningCpuMs, 3)} ms CPU (AWS: KMS Sign, a network request).`,
      `Client authentication: ${fmt(ca.cpuMsPerCall * 1000, 2)} µs CPU per call (wrong secret: ${fmt(ca.wrongSecretCpuMsPerCall * 1000, 2)} µs), budget ${ca.limitMs * 1000} µs: ${verdict(ca.pass)}`,
    ];
  };
  const failed = r.budgets.filter((b) => !b.pass);
  return [
    '',
    `Device and User Service benchmark — ${r.mode} run, ${r.startedAt}, ${r.durationSeconds} s`,
    `${r.machine.cpu} ×${r.machine.cpuCount}, ${r.machine.os}, Node ${r.machine.node}`,
    `Baseline (document client + one GetItem): ${(r.baseline.bundleBytes / 1024).toFixed(1)} KiB, cold start ${r.baseline.coldStart.medianMs.toFixed(1)} ms (median of ${r.baseline.coldStart.runs}).`,
    `Floor (the same client, running each function's floor steps): ${(r.floor.bundleBytes / 1024).toFixed(1)} KiB (${(r.floor.queue.bundleBytes / 1024).toFixed(1)} KiB with the SQS client, `
      + `${(r.floor.kms.bundleBytes / 1024).toFixed(1)} KiB with the KMS client); cold start ÷ floor is the budget, ÷ base informative.`,
    ...r.functions.filter((f) => f.bundle.lazy.length > 0).map((f) => `${f.name} also ships ${f.bundle.lazy.map((l) => `${l.entry} (${(l.bytes / 1024).toFixed(1)} KiB)`).join(', ')}, imported on first use, not in its bundle KiB.`),
    '',
    main,
    ...(r.tokenEndpoint ? tokenEndpoint(r.tokenEndpoint) : []),
    ...(r.httpShim ? ['', renderOldPath(r.httpShim)] : []),
    '',
    `Budgets: ${r.summary.passed}/${r.summary.checks} PASS${failed.length ? `; FAIL: ${failed.map((b) => `${b.id} (${b.value} > ${b.limit})`).join(', ')}` : ''}`,
  ].join('\n');
}

/** Sends everything written to stdout to /dev/null (with the same write call), until restored. */
function sinkStdout(): () => void {
  const fd = openSync('/dev/null', 'w');
  const original = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array, encoding?: unknown, callback?: () => void) => {
    if (typeof chunk === 'string') writeSync(fd, chunk);
    else writeSync(fd, chunk);
    const cb = typeof encoding === 'function' ? (encoding as () => void) : callback;
    cb?.();
    return true;
  }) as typeof process.stdout.write;
  return () => {
    process.stdout.write = original;
    closeSync(fd);
  };
}

/**
 * A page that asks for a recent sign-in (EndpointDeclaration.recentSignIn) sends a session signed in
 * more than RECENT_SIGN_IN_SECONDS ago to the sign-in page: the sessions an event's cookies name are
 * signed in anew (the sign-in time is read from the session's expiry, which moves to now +
 * SESSION_TTL_SECONDS).
 */
async function renewSignIns(doc: DocumentClient, { cookies = [] }: { cookies?: string[] }): Promise<void> {
  for (const cookie of cookies) {
    const [name, value] = cookie.split('=');
    if (name !== 'session' || !value) continue;
    await doc.send(new UpdateCommand({
      TableName: TABLE, Key: sessionKey(hashSecret(value)), UpdateExpression: 'SET expiresAt = :at', ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': epochSeconds(new Date()) + SESSION_TTL_SECONDS },
    }));
  }
}
