import { Agent, request } from 'node:http';

// The load generator both servers get: a closed loop of N clients over N keep-alive connections on
// loopback. Each client sends its next request as soon as the previous answer has been read whole.
// `drive` sends prepared bodies (a fresh code or token each); `driveChains` has each client rotate
// its own refresh token, each request carrying the token the previous answer gave, as an
// application refreshing its user's access does.

export interface LoadResult {
  calls: number;
  seconds: number;
  /** Milliseconds from sending a request to the last byte of its answer, in completion order (errors too). */
  latenciesMs: number[];
  /** Answers other than 200 with both tokens, and the first of them. */
  errors: number;
  firstError?: string;
}

export interface Target {
  /** `http://127.0.0.1:<port>` */
  url: string;
  path: string;
}

/** A poster over `concurrency` keep-alive connections that records each answer's latency and judges it. */
function poster(target: Target, concurrency: number) {
  const { hostname, port } = new URL(target.url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const result = { latenciesMs: [] as number[], errors: 0, firstError: undefined as string | undefined };
  /** POSTs `body`; resolves with the answer's refresh token, or undefined when the answer is an error. */
  const post = (body: string) => new Promise<string | undefined>((resolve, reject) => {
    const started = performance.now();
    const req = request({
      host: hostname, port: Number(port), path: target.path, method: 'POST', agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        result.latenciesMs.push(performance.now() - started);
        const text = Buffer.concat(chunks).toString('utf8');
        const refreshToken = /"refresh_token"\s*:\s*"([^"]+)"/.exec(text)?.[1];
        if (res.statusCode !== 200 || !/"access_token"/.test(text) || !refreshToken) {
          result.errors += 1;
          result.firstError ??= `${target.url}${target.path} answered ${res.statusCode}: ${text.slice(0, 200)}`;
          resolve(undefined);
        } else {
          resolve(refreshToken);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  return { post, result, close: () => agent.destroy() };
}

/** Runs `clients` until they end; the figures of every call they made. */
async function run(target: Target, concurrency: number, clients: (post: (body: string) => Promise<string | undefined>) => Promise<number>[]): Promise<LoadResult> {
  const { post, result, close } = poster(target, concurrency);
  const t0 = performance.now();
  let calls = 0;
  try {
    calls = (await Promise.all(clients(post))).reduce((a, b) => a + b, 0);
  } finally {
    close();
  }
  const { latenciesMs, errors, firstError } = result;
  return { calls, seconds: (performance.now() - t0) / 1000, latenciesMs, errors, ...(firstError ? { firstError } : {}) };
}

/**
 * POSTs each form body once (`application/x-www-form-urlencoded`) with `concurrency` clients. An
 * answer other than 200 with a JSON body naming an access token and a refresh token is an error:
 * counted (the caller decides how many it accepts); a connection that fails ends the run.
 */
export function drive(target: Target, bodies: readonly string[], concurrency: number): Promise<LoadResult> {
  let next = 0;
  return run(target, concurrency, (post) => Array.from({ length: concurrency }, async () => {
    let calls = 0;
    while (next < bodies.length) {
      await post(bodies[next++]!);
      calls += 1;
    }
    return calls;
  }));
}

/**
 * One client per first token, each making `callsPerChain` refreshes in a row with the token the
 * previous answer gave (`body` turns a token into the request). A chain whose answer is an error
 * ends there (it has no token to go on with); its error is counted as `drive` counts it. Resolves
 * with the figures and each chain's last token, to go on with in the next round.
 */
export async function driveChains(
  target: Target, firstTokens: readonly string[], callsPerChain: number, body: (token: string) => string,
): Promise<LoadResult & { lastTokens: (string | undefined)[] }> {
  const lastTokens: (string | undefined)[] = [...firstTokens];
  const load = await run(target, firstTokens.length, (post) => firstTokens.map(async (_, chain) => {
    let calls = 0;
    while (calls < callsPerChain && lastTokens[chain] !== undefined) {
      lastTokens[chain] = await post(body(lastTokens[chain]!));
      calls += 1;
    }
    return calls;
  }));
  return { ...load, lastTokens };
}
