import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One request a test receiver got. */
export interface Received {
  at: number;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers a request: a status, a status after a pause, or a behaviour (hang, redirect, a huge body). */
export type Answer = number | { status: number; afterMs: number } | 'hang' | 'redirect' | 'huge';

/**
 * A webhook receiver on 127.0.0.1 for tests: records every request and answers as told
 * (`answer`, default 204). `next(predicate)` waits for a matching request.
 */
export async function startReceiver(answer: (received: Received) => Answer = () => 204) {
  const received: Received[] = [];
  const waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = { at: Date.now(), headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      for (const waiter of [...waiters]) {
        if (waiter.match(entry)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(entry);
        }
      }
      const how = answer(entry);
      if (how === 'hang') {
        hanging.add(res);
        return;
      }
      if (how === 'redirect') {
        res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
        return;
      }
      if (how === 'huge') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        let sent = 0;
        const pump = () => {
          while (sent < 50 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
          if (sent >= 50 * 1024 * 1024) res.end();
          else res.once('drain', pump);
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      if (typeof how === 'object') {
        hanging.add(res);
        const timer = setTimeout(() => {
          hanging.delete(res);
          res.writeHead(how.status).end();
        }, how.afterMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      res.writeHead(how).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Events (parsed bodies) received so far. */
    events: () => received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> }),
    next(match: (r: Received) => boolean, timeoutMs = 5000): Promise<Received> {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          if (waiters.includes(waiter)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            reject(new Error(`no matching webhook within ${timeoutMs} ms; received ${received.map((r) => r.body).join(', ')}`));
          }
        }, timeoutMs);
      });
    },
    stop: () => new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
