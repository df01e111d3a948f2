import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { AWS_ENV, ENV, MAIL_ENV } from '#shared/config';
import { hashSecret } from '#shared/secrets';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { formatTimestamp } from '#shared/domain/time';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { countRequests } from '../../test/support/count-requests.ts';
import { failStart, serveRequests, SERVER_ENV, tally, timeRequests, type Minted, type Reply } from './protocol.ts';

// The service's authorization server as it runs locally: the token endpoint's handler behind the
// API Gateway stand-in (local/gateway.ts), in a process of its own like the peer's. Its DynamoDB
// requests are counted on the handlers' own client (`doc` of #shared/runtime); codes and
// refresh tokens are made beforehand through the grant repository, as bench/scenarios.ts does.

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
  const { newAuthorizationCode, newGrantToken } = await import('#shared/oauth/grant-tokens');
  const counter = countRequests(doc);
  const waited = timeRequests(doc);
  const grants = createGrantRepo({ doc: createDocumentClient({ endpoint, limits: { requestTimeoutMs: 30_000 } }), table });
  const started = await startGateway({ api: 'auth', port: Number(process.env[SERVER_ENV.port] ?? 0) });
  server = started.server;
  const { port } = server.address() as { port: number };

  const scopes = [...ALL_SCOPES];
  const clientId = DEMO_CLIENT.clientId;
  const userId = DEMO_USERS[0].user.id;
  const redirectUri = DEMO_CLIENT.redirectUris[0];
  const expiresAt = () => Math.floor(Date.now() / 1000) + 3600;
  // Alice's consent to the demo client (the peer's Grant), recorded once; codes and families carry
  // its generation (see Consent.grantGeneration): without both the exchange's and the rotation's
  // check of the consent fails (grant_revoked).
  let consent = await grants.getConsent(userId, clientId);
  if (!consent) {
    consent = { userId, clientId, scopes, grantedAt: formatTimestamp(new Date()), grantGeneration: randomUUID() };
    await grants.saveConsent(consent);
  }
  const generation = consent.grantGeneration === undefined ? {} : { grantGeneration: consent.grantGeneration };
  const mintOne = async (kind: 'code' | 'refresh'): Promise<Minted> => {
    const codeVerifier = randomBytes(32).toString('base64url');
    const { code, stored } = newAuthorizationCode({
      clientId, userId, redirectUri, scopes, expiresAt: expiresAt(), codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      ...generation,
    });
    await grants.createCode(stored);
    if (kind === 'code') return { value: code, codeVerifier };
    // A refresh token is the first of a family: its code redeemed through the repository.
    const token = newGrantToken(userId, stored.familyId);
    await grants.redeemCode(stored.familyId, stored.codeHash, hashSecret(token), new Date());
    return { value: token };
  };

  serveRequests(async (request): Promise<Reply> => {
    if (request.type === 'stats') {
      const cpu = process.cpuUsage();
      return { id: request.id, type: 'stats', stats: { requests: counter.total, operations: tally(counter.operations), operationsMs: { ...waited }, cpuMs: (cpu.user + cpu.system) / 1000 } };
    }
    const values: Minted[] = [];
    for (let i = 0; i < request.count; i += 16) {
      values.push(...await Promise.all(Array.from({ length: Math.min(16, request.count - i) }, () => mintOne(request.kind))));
    }
    return { id: request.id, type: 'minted', values };
  });
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, tokenPath: '/oauth/token' } satisfies Reply);
} catch (error) {
  server?.close();
  await failStart(error);
}
