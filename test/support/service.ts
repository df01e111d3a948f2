import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { issueAccessToken, type AccessTokenRequest } from '#shared/auth/access-token';
import { createLocalSigner } from '#shared/auth/local-signer';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createTable } from '#local/dynamodb-local';
import { startLocalService, type LocalService, type LocalServiceOptions } from '#local/service';

/** A fresh table on the run's DynamoDB Local, with a document client on it. */
export async function freshTable() {
  const endpoint = inject('dynamodbEndpoint');
  const table = `test-${randomUUID()}`;
  await createTable(endpoint, table);
  // Tests drive DynamoDB Local with up to 50 concurrent transactions on a 2-core machine, where one
  // can take longer than the service's 1 s per attempt; the service's own clients keep that limit.
  return { endpoint, table, doc: createDocumentClient({ endpoint, limits: { requestTimeoutMs: 10_000 } }) };
}

/**
 * The whole local service (both hosts, seeded) on free ports, over a fresh table of the run's
 * DynamoDB Local unless `options` name another; a state folder (signing key, outbox) of its own,
 * unless `options` name one, is removed when it stops. The webhook pipeline runs only when `options.webhooks` asks.
 */
export async function startTestService(options: Partial<LocalServiceOptions> = {}): Promise<LocalService> {
  const ownState = options.stateDir === undefined;
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'dus-'));
  const removeState = () => {
    if (ownState) rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const service = await startLocalService({
      apiPort: 0,
      authPort: 0,
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      tableName: `test-${randomUUID()}`,
      // The webhook pipeline polls the table's stream: only the files that test it (or invoke its functions) turn it on.
      webhooks: false,
      ...options,
      stateDir,
    });
    return { ...service, stop: () => service.stop().finally(removeState) };
  } catch (error) {
    removeState();
    throw error;
  }
}

/**
 * Gives the authorization server's own DynamoDB client, in this test file's process, a per-attempt
 * limit of `ms` instead of the service's 1 s. For a test whose one large request (a 100-item
 * transaction) can keep DynamoDB Local past 1 s while the other test files load a 2-core machine:
 * what the service does at its limit (503, nothing written) is slow-dependency.test.ts's subject,
 * with the real limit. Call it after the service started (the client reads the environment it sets).
 */
export async function loosenAuthStorageLimit(ms = 10_000): Promise<void> {
  const { doc } = await import('#shared/auth/runtime');
  const handler = doc.config.requestHandler as { updateHttpClientConfig(key: string, value: number): void };
  handler.updateHttpClientConfig('requestTimeout', ms);
  handler.updateHttpClientConfig('socketTimeout', ms);
}

/** An access token signed by the service's local key; any claim can be overridden for negative tests. */
export function tokenFor(
  service: LocalService,
  userId: string,
  scopes: string[],
  overrides: Partial<AccessTokenRequest> = {},
): Promise<string> {
  return issueAccessToken(createLocalSigner(service.signingKeyFile), {
    issuer: service.authUrl,
    audience: service.apiUrl,
    userId,
    clientId: 'test-client',
    scopes,
    ...overrides,
  });
}
