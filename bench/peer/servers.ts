import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, type Minted, type Reply, type Request, type ServerStats } from './protocol.ts';

/** The peer's package, as the benchmark loads it (overridable for the test of a missing peer). */
export const peerPackage = () => process.env[SERVER_ENV.peerPackage] || 'oidc-provider';

/** How to install the peer: printed when it is missing. */
export const PEER_INSTALL_HINT = 'npm install --save-dev oidc-provider   (it is a devDependency: `npm ci` installs it)';

/** The peer's installed version, or an error saying how to install it. */
export function peerVersion(): string {
  const name = peerPackage();
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve(name));
  } catch {
    throw new PeerMissingError(`The peer (${name}) is not installed. Install it with:\n  ${PEER_INSTALL_HINT}`);
  }
  // The package.json above the entry point (lib/index.js → package root).
  for (let dir = entry; dir !== '/'; dir = dir.slice(0, dir.lastIndexOf('/')) || '/') {
    try {
      const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    } catch { /* keep looking upwards */ }
  }
  return 'unknown';
}

export class PeerMissingError extends Error {
  override name = 'PeerMissingError';
}

export interface RunningServer {
  name: 'ours' | 'peer';
  url: string;
  tokenPath: string;
  pid: number;
  mint(kind: 'code' | 'refresh', count: number): Promise<Minted[]>;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

const SCRIPTS = {
  ours: fileURLToPath(new URL('./ours-server.ts', import.meta.url)),
  peer: fileURLToPath(new URL('./peer-server.ts', import.meta.url)),
};

/**
 * Starts one of the two servers in a child process and waits for it to say it is ready. If it fails
 * to start (an error, an exit, no answer within 60 s) the child is killed before this throws.
 */
export async function startServer(name: 'ours' | 'peer', env: Record<string, string>): Promise<RunningServer> {
  const child: ChildProcess = fork(SCRIPTS[name], [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_ENV: 'production', ...env },
    // Logs (the service's request lines) go nowhere, as in the warm benchmark; errors are kept.
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };

  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let ready: ((reply: Reply) => void) | undefined;
  child.on('message', (reply: Reply) => {
    if ('id' in reply) {
      const waiter = pending.get(reply.id);
      pending.delete(reply.id);
      if (reply.type === 'error') waiter?.reject(new Error(`${name} server: ${reply.message}`));
      else waiter?.resolve(reply);
    } else {
      ready?.(reply);
    }
  });
  child.once('exit', (code, signal) => {
    const error = new Error(`the ${name} server exited (${signal ?? code})${stderr ? `:\n${stderr}` : ''}`);
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
    ready?.({ type: 'failed', message: error.message });
  });
  const ask = (request: { type: 'mint'; kind: 'code' | 'refresh'; count: number } | { type: 'stats' }) => new Promise<Reply>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    child.send({ ...request, id } as Request);
  });

  const first = await new Promise<Reply>((resolve) => {
    ready = resolve;
    setTimeout(() => resolve({ type: 'failed', message: `the ${name} server did not start within 60 s` }), 60_000).unref();
  });
  ready = undefined;
  if (first.type !== 'ready') {
    await stop();
    const detail = first.type === 'failed' ? first.message : JSON.stringify(first);
    throw new Error(`The ${name} server failed to start: ${detail}${stderr && !detail.includes(stderr) ? `\n${stderr}` : ''}`);
  }
  return {
    name, url: first.url, tokenPath: first.tokenPath, pid: child.pid!,
    mint: async (kind, count) => {
      const reply = await ask({ type: 'mint', kind, count });
      if (reply.type !== 'minted') throw new Error(`${name} server: unexpected reply ${reply.type}`);
      return reply.values;
    },
    stats: async () => {
      const reply = await ask({ type: 'stats' });
      if (reply.type !== 'stats') throw new Error(`${name} server: unexpected reply ${reply.type}`);
      return reply.stats;
    },
    stop,
  };
}
