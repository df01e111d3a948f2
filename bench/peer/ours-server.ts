import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { AWS_ENV, ENV, MAIL_ENV } from '#shared/config';
import { countRequests } from '../../test/support/count-requests.ts';
import { failStart, serveRequests, SERVER_ENV, tally, timeRequests, type Reply } from './protocol.ts';

// The service's authorization server as it runs locally: the token endpoint's handler behind the
// API Gateway stand-in (local/gateway.ts), in a process of its own like the peer's. Its DynamoDB
// requests are counted on the handlers' own client (`doc` of #shared/runtime); codes and
// refresh tokens are made beforehand through the grant repository (bench/peer/mint.ts).

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

let server: Server | undefined;
try {
  const endpoint = env(SERVER_ENV.endpoint);
  const table = env(SERVER_ENV.table);
  Object.assign(process.env, {
    [ENV.tableName]: table,
    [ENV.dynamodbEndpoint]: endpoint,
    [ENV.issuer]: 'https://auth.example.com',
    [ENV.audience]: env(SERVER_ENV.audience),
    [ENV.localSigningKeyFile]: env(SERVER_ENV.keyFile),
    [MAIL_ENV.outboxDir]: join(tmpdir(), 'dus-bench-peer-outbox-unused'),
    [AWS_ENV.region]: 'eu-west-1',
  });
  delete process.env[ENV.signingKeyId];
  // Handler modules read the environment when they load: only now may they be imported.
  const { doc } = await import('#shared/runtime');
  const { startGateway } = await import('#local/gateway');
  const { createMinter } = await import('./mint.ts');
  const counter = countRequests(doc);
  const waited = timeRequests(doc);
  const started = await startGateway({ api: 'auth', port: Number(process.env[SERVER_ENV.port] ?? 0) });
  server = started.server;
  const { port } = server.address() as { port: number };

  const minter = await createMinter(endpoint, table);

  serveRequests(async (request): Promise<Reply> => {
    if (request.type === 'stats') {
      const cpu = process.cpuUsage();
      return { id: request.id, type: 'stats', stats: { requests: counter.total, operations: tally(counter.operations), operationsMs: { ...waited }, cpuMs: (cpu.user + cpu.system) / 1000 } };
    }
    const values = await minter.mint(request.kind, request.count);
    return { id: request.id, type: 'minted', values };
  });
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, tokenPath: '/oauth/token' } satisfies Reply);
} catch (error) {
  server?.close();
  await failStart(error);
}
