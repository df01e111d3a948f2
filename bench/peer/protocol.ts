import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DocumentClient } from '#shared/data/document-client';

// The messages between the benchmark and the two servers it compares (child processes with an IPC
// channel): each server starts, says `ready` (or `failed`), then mints grants and reports its counters.

/** What the benchmark asks: `mint` fresh codes or refresh tokens (outside the timing), `stats` the counters. */
export type Request =
  | { id: number; type: 'mint'; kind: 'code' | 'refresh'; count: number }
  | { id: number; type: 'stats' };

/** A fresh grant: an authorization code with its PKCE verifier, or a refresh token. */
export interface Minted {
  value: string;
  codeVerifier?: string;
}

export interface ServerStats {
  /** DynamoDB requests sent by the server's request path (not by minting), in total and by operation. */
  requests: number;
  operations: Record<string, number>;
  /** Milliseconds spent waiting for DynamoDB, summed over requests, by operation: where the time goes. */
  operationsMs: Record<string, number>;
  /** Process CPU (user + system) in milliseconds since the server started. */
  cpuMs: number;
}

export type Reply =
  | { type: 'ready'; url: string; tokenPath: string }
  | { type: 'failed'; message: string }
  | { id: number; type: 'minted'; values: Minted[] }
  | { id: number; type: 'stats'; stats: ServerStats }
  | { id: number; type: 'error'; message: string };

/** The settings both servers get (environment variables of the child). */
export const SERVER_ENV = {
  endpoint: 'BENCH_DYNAMODB_ENDPOINT',
  table: 'BENCH_TABLE',
  keyFile: 'BENCH_SIGNING_KEY_FILE',
  audience: 'BENCH_AUDIENCE',
  /** The port to listen on (default 0: a free one). */
  port: 'BENCH_PEER_PORT',
  /** The package loaded as the peer (default `oidc-provider`). */
  peerPackage: 'BENCH_PEER_PACKAGE',
} as const;

/**
 * Times every request a document client sends (from the SDK's initialize step to its answer), summed
 * by operation. Attached next to the request counter of test/support/count-requests.ts.
 */
export function timeRequests(client: DocumentClient | DynamoDBDocumentClient): Record<string, number> {
  // Both clients take the SDK's middleware shape at the initialize step.
  const stack = client.middlewareStack as DocumentClient['middlewareStack'];
  const totals: Record<string, number> = {};
  stack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        const op = String(context.commandName);
        totals[op] = (totals[op] ?? 0) + performance.now() - started;
      }
    },
    { step: 'initialize', name: 'bench-time-requests' },
  );
  return totals;
}

/** Counts operations by name. */
export function tally(operations: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const op of operations) counts[op] = (counts[op] ?? 0) + 1;
  return counts;
}

/** Serves the benchmark's requests on the IPC channel with `handle`. */
export function serveRequests(handle: (request: Request) => Promise<Reply>): void {
  process.on('message', (request: Request) => {
    handle(request).then(
      (reply) => process.send!(reply),
      (error: unknown) => process.send!({ id: request.id, type: 'error', message: (error as Error).message } satisfies Reply),
    );
  });
  // The benchmark gone (its channel closed), or stopping us: nothing left to serve. An orderly exit
  // also lets `--cpu-prof` write its profile (NODE_OPTIONS reaches both servers).
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

/** Says why the server could not start, and exits non-zero (the returned promise never settles). */
export function failStart(error: unknown): Promise<never> {
  const message = (error as Error)?.message ?? String(error);
  if (process.send) process.send({ type: 'failed', message } satisfies Reply, () => process.exit(1));
  else process.stderr.write(`${message}\n`);
  // Exit even if the message could not be delivered.
  setTimeout(() => process.exit(1), 1000);
  return new Promise<never>(() => undefined);
}
