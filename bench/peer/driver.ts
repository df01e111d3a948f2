import { Agent, request } from 'node:http';

// The load generator both servers get: a closed loop of N clients over N keep-alive connections on
// loopback. Each client sends its next request as soon as the previous answer has been read whole.

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

/**
 * POSTs each form body once (`application/x-www-form-urlencoded`) with `concurrency` clients. An
 * answer other than 200 with a JSON body naming an access token and a refresh token is an error:
 * counted (the caller decides how many it accepts); a connection that fails ends the run.
 */
export async function drive(target: Target, bodies: readonly string[], concurrency: number): Promise<LoadResult> {
  const { hostname, port } = new URL(target.url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const latenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const post = (body: string) => new Promise<void>((resolve, reject) => {
    const started = performance.now();
    const req = request({
      host: hostname, port: Number(port), path: target.path, method: 'POST', agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        latenciesMs.push(performance.now() - started);
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200 || !/"access_token"/.test(text) || !/"refresh_token"/.test(text)) {
          errors += 1;
          firstError ??= `${target.url}${target.path} answered ${res.statusCode}: ${text.slice(0, 200)}`;
        }
        resolve();
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  const t0 = performance.now();
  try {
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) await post(bodies[next++]!);
    }));
  } finally {
    agent.destroy();
  }
  return { calls: bodies.length, seconds: (performance.now() - t0) / 1000, latenciesMs, errors, ...(firstError ? { firstError } : {}) };
}
