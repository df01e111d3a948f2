import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awsClientConfig, localEndpointConfig, observeClient, type AwsCallLimits } from '#shared/aws/client-config';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { countRequests } from '../../test/support/count-requests.ts';
import { dynamoDbAdapter } from './dynamodb-adapter.ts';
import { failStart, serveRequests, SERVER_ENV, tally, timeRequests, type Minted, type Reply } from './protocol.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/domain/grant';

// The peer: oidc-provider on 127.0.0.1, configured for the job the service's token endpoint does
// (bench/RESULTS.md, "Peer"): authorization code with PKCE S256, one confidential client with
// client_secret_post, rotating refresh tokens, RS256 JWT access tokens for one resource server
// (resource indicators), one user whose consent (a Grant) exists, storage in the service's table on
// the benchmark's DynamoDB Local through bench/peer/dynamodb-adapter.ts. Run by bench/peer/compare.ts
// as a child process with an IPC channel (bench/peer/protocol.ts).

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const server: Server = createServer();
try {
  const endpoint = env(SERVER_ENV.endpoint);
  const table = env(SERVER_ENV.table);
  const audience = env(SERVER_ENV.audience);
  const jwk = createPrivateKey(readFileSync(env(SERVER_ENV.keyFile))).export({ format: 'jwk' });
  const packageName = process.env[SERVER_ENV.peerPackage] || 'oidc-provider';
  const { default: Provider } = await import(packageName) as { default: new (issuer: string, config: unknown) => PeerProvider };

  // The adapter's client is the only one whose requests count: the provider's own path.
  const doc = sdkDocumentClient(endpoint);
  const counter = countRequests(doc);
  const waited = timeRequests(doc);
  const mintDoc = sdkDocumentClient(endpoint, { requestTimeoutMs: 30_000 });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(process.env[SERVER_ENV.port] ?? 0), '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  const issuer = `http://127.0.0.1:${port}`;
  const scope = ALL_SCOPES.join(' ');
  const redirectUri = DEMO_CLIENT.redirectUris[0];
  const accountId = DEMO_USERS[0].user.id;

  const config = (adapterDoc: typeof doc) => ({
    adapter: dynamoDbAdapter(adapterDoc, table),
    clients: [{
      client_id: DEMO_CLIENT.clientId,
      client_secret: DEMO_CLIENT.clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    }],
    jwks: { keys: [{ ...jwk, alg: 'RS256', use: 'sig', kid: 'bench' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // The user exists in memory: the service's token endpoint does not read the user either.
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    scopes: [...ALL_SCOPES],
    pkce: { required: () => true },
    rotateRefreshToken: true,
    // A refresh token for every code of a client allowed the grant, as the service does (without
    // this, oidc-provider issues one only for the `offline_access` scope).
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    ttl: { AccessToken: ACCESS_TOKEN_TTL_SECONDS, AuthorizationCode: 600, RefreshToken: 30 * 86_400, Grant: 30 * 86_400, Session: 86_400, Interaction: 600 },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope, audience, accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
  });
  const provider = new Provider(issuer, config(doc));
  // Minting goes through the provider's own models on a second provider over an uncounted client.
  const minter = new Provider(issuer, config(mintDoc));
  server.on('request', provider.callback());

  const client = await minter.Client.find(DEMO_CLIENT.clientId);
  if (!client) throw new Error('the peer does not know the demo client');
  // The user's consent, given once: one grant of the service's scopes for the resource server.
  const grant = new minter.Grant({ accountId, clientId: DEMO_CLIENT.clientId });
  grant.addResourceScope(audience, scope);
  const grantId = await grant.save();

  const mintOne = async (kind: 'code' | 'refresh'): Promise<Minted> => {
    if (kind === 'code') {
      const codeVerifier = randomBytes(32).toString('base64url');
      const code = new minter.AuthorizationCode({
        accountId, client, grantId, scope, redirectUri, resource: audience,
        codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'), codeChallengeMethod: 'S256',
      });
      return { value: await code.save(), codeVerifier };
    }
    const token = new minter.RefreshToken({ accountId, client, grantId, scope, resource: audience, rotations: 0, gty: 'authorization_code' });
    return { value: await token.save() };
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
  process.send!({ type: 'ready', url: issuer, tokenPath: '/token' } satisfies Reply);
} catch (error) {
  server.close();
  await failStart(error);
}

interface PeerModel { save(): Promise<string> }
interface PeerProvider {
  callback(): Parameters<Server['on']>[1];
  Client: { find(id: string): Promise<unknown> };
  Grant: new (init: { accountId: string; clientId: string }) => PeerModel & { addResourceScope(resource: string, scope: string): void };
  AuthorizationCode: new (init: Record<string, unknown>) => PeerModel;
  RefreshToken: new (init: Record<string, unknown>) => PeerModel;
}

/**
 * The AWS SDK's document client, as a user of node-oidc-provider would write its DynamoDB adapter (and
 * as the service's own client was before shared/data/document-client.ts): the same limits, the same
 * marshalling, the SDK's logger middleware dropped as the service drops it.
 */
function sdkDocumentClient(endpoint: string, limits?: Partial<AwsCallLimits>): DynamoDBDocumentClient {
  const client = observeClient(new DynamoDBClient({ ...awsClientConfig(limits), ...localEndpointConfig(endpoint) }));
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
