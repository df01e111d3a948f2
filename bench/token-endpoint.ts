import { hashSecret } from '#shared/secrets';
import { authenticateClient, type ClientCredentials } from '#shared/oauth/client-auth';
import { createLocalSigner } from '#shared/keys/local-signer';
import type { Client } from '#shared/domain/client';
import { benchContext } from './events.ts';
import type { Handler, Scenario } from './scenarios.ts';
import { percentile } from './stats.ts';

export interface ThroughputResult {
  concurrency: number;
  calls: number;
  requestsPerSecond: number;
  /** Process CPU (user + system) per call: the handler, and a run of only its DynamoDB requests. */
  cpuMsPerCall: number;
  bareCpuMsPerCall: number;
  /** Handler CPU per call minus the CPU of the same DynamoDB requests made bare. */
  cpuExclDynamoDbMsPerCall: number;
  /** The above, minus the local RS256 signature (in AWS, KMS signs: a network request instead). */
  cpuExclDynamoDbAndSigningMsPerCall: number;
  p50Ms: number;
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

async function runConcurrently(count: number, concurrency: number, call: (i: number) => Promise<void>) {
  let next = 0;
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      const s = performance.now();
      await call(i);
      latencies.push(performance.now() - s);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, cpuMs: cpuMs(process.cpuUsage(cpu0)), latencies };
}

/** CPU of one RS256 signature with the local key (what KMS does in AWS). */
export async function measureSigning(keyFile: string, iterations: number): Promise<number> {
  const signer = createLocalSigner(keyFile);
  const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9');
  for (let i = 0; i < 10; i++) await signer.sign(data);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await signer.sign(data);
  return cpuMs(process.cpuUsage(cpu0)) / iterations;
}

/**
 * Requests per second of the token endpoint (refresh grant) at each concurrency, with `calls`
 * in-process calls over fresh refresh tokens; then the same number of bare DynamoDB request pairs
 * at the same concurrency, whose CPU is subtracted to leave the CPU the function itself spends.
 */
export async function measureTokenThroughput(
  scenario: Scenario,
  handler: Handler,
  opts: { calls: number; concurrency: readonly number[]; signCpuMs: number },
): Promise<ThroughputResult[]> {
  if (!scenario.bare) throw new Error(`${scenario.name} has no bare requests to compare with`);
  const context = benchContext(scenario.fn);
  const results: ThroughputResult[] = [];
  const blocks = 4;
  const warmup = Math.min(20, opts.calls);
  for (const concurrency of opts.concurrency) {
    const total = warmup + opts.calls;
    const events = await scenario.events(total);
    const bare = await scenario.bare.prepare(total);
    const callHandler = async (i: number) => {
      const response = await handler(events[i]!, context);
      if (response.statusCode !== 200) throw new Error(`token endpoint answered ${response.statusCode}: ${response.body}`);
    };
    const callBare = async (i: number) => {
      await bare[i]!();
    };
    await runConcurrently(warmup, concurrency, callHandler);
    await runConcurrently(warmup, concurrency, callBare);
    // Alternate blocks of handler calls and bare calls, so that both see the same machine.
    let seconds = 0;
    let cpu = 0;
    let bareCpu = 0;
    const latencies: number[] = [];
    for (let b = 0; b < blocks; b++) {
      const from = warmup + Math.floor((b * opts.calls) / blocks);
      const count = warmup + Math.floor(((b + 1) * opts.calls) / blocks) - from;
      const run = await runConcurrently(count, concurrency, (i) => callHandler(from + i));
      const bareRun = await runConcurrently(count, concurrency, (i) => callBare(from + i));
      seconds += run.seconds;
      cpu += run.cpuMs;
      bareCpu += bareRun.cpuMs;
      latencies.push(...run.latencies);
    }
    const cpuPerCall = cpu / opts.calls;
    const bareCpuPerCall = bareCpu / opts.calls;
    results.push({
      concurrency,
      calls: opts.calls,
      requestsPerSecond: opts.calls / seconds,
      cpuMsPerCall: cpuPerCall,
      bareCpuMsPerCall: bareCpuPerCall,
      cpuExclDynamoDbMsPerCall: cpuPerCall - bareCpuPerCall,
      cpuExclDynamoDbAndSigningMsPerCall: cpuPerCall - bareCpuPerCall - opts.signCpuMs,
      p50Ms: percentile(latencies, 50),
    });
  }
  return results;
}

export interface ClientAuthResult {
  iterations: number;
  cpuMsPerCall: number;
  wallMsPerCall: number;
  /** A wrong secret costs the same (constant time): measured too. */
  wrongSecretCpuMsPerCall: number;
}

/** CPU of `authenticateClient` (hash of the presented secret, constant-time compare) per call. */
export function measureClientAuthentication(client: Client, secret: string, iterations: number): ClientAuthResult {
  const good: ClientCredentials = { clientId: client.clientId, clientSecret: secret, basic: true };
  const bad: ClientCredentials = { ...good, clientSecret: `${secret}x` };
  if (client.secretHash !== hashSecret(secret)) throw new Error('the demo client secret does not match its stored hash');
  const time = (credentials: ClientCredentials, expectOk: boolean) => {
    for (let i = 0; i < Math.min(1000, iterations); i++) attempt(credentials, expectOk);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) attempt(credentials, expectOk);
    return { cpu: cpuMs(process.cpuUsage(cpu0)) / iterations, wall: (performance.now() - t0) / iterations };
  };
  const ok = time(good, true);
  const wrong = time(bad, false);
  return { iterations, cpuMsPerCall: ok.cpu, wallMsPerCall: ok.wall, wrongSecretCpuMsPerCall: wrong.cpu };

  function attempt(credentials: ClientCredentials, expectOk: boolean) {
    try {
      authenticateClient(client, credentials);
      if (!expectOk) throw new Error('a wrong client secret was accepted');
    } catch (error) {
      if (expectOk) throw error;
    }
  }
}
