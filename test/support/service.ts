import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, inject } from 'vitest';
import { issueAccessToken, type AccessTokenRequest } from '#shared/oauth/access-token';
import { createLocalSigner } from '#shared/keys/local-signer';
import { createDocumentClient, type DocumentClientOptions } from '#shared/data/dynamodb';
import { createTable } from '#local/dynamodb-local';
import { startLocalService, type LocalService, type LocalServiceOptions } from '#local/service';
import { createRepos, newTableClient, type Repos } from './repos';

/** A fresh table on the run's DynamoDB Local, with a document client on it. */
export async function freshTable() {
  const made = newTableClient();
  await createTable(made.endpoint, made.table);
  return made;
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
 * The whole local service for the tests of one `describe` (or file): started by startTestService
 * in a `beforeAll`, stopped in an `afterAll`, both registered here, where it is called. What it
 * returns stands for the running service: its table and DynamoDB endpoint are known at once, the
 * rest (hosts, key file, outbox, stand-ins) from its start on; read before it, they throw.
 *
 * Hooks run in the order they are registered and `afterAll` hooks in reverse (vitest's default
 * `sequence.hooks: 'stack'`): a `beforeAll` registered before this call runs before the service
 * starts, an `afterAll` registered before it, after the service stopped.
 */
export function useTestService(options: Partial<LocalServiceOptions> = {}): LocalService {
  const settings = { dynamodbEndpoint: inject('dynamodbEndpoint'), tableName: `test-${randomUUID()}`, ...options };
  let starting: Promise<LocalService> | undefined;
  let service: LocalService | undefined;
  // Also when the start outlived its hook's time limit: what it started is stopped all the same.
  const stop = async () => {
    const started = await starting?.catch(() => undefined);
    starting = undefined;
    service = undefined;
    await started?.stop();
  };
  beforeAll(async () => {
    starting = startTestService(settings);
    service = await starting;
  });
  afterAll(stop);
  const running = (): LocalService => {
    if (!service) throw new Error('The test service runs from its beforeAll to its afterAll: read it in a test or a hook.');
    return service;
  };
  return {
    tableName: settings.tableName,
    dynamodbEndpoint: settings.dynamodbEndpoint,
    get apiUrl() { return running().apiUrl; },
    get authUrl() { return running().authUrl; },
    get signingKeyFile() { return running().signingKeyFile; },
    get outboxDir() { return running().outboxDir; },
    get aws() { return running().aws; },
    get webhooks() { return running().webhooks; },
    get iot() { return running().iot; },
    /** Stops the service before its afterAll would. */
    stop,
  };
}

/**
 * A DynamoDB client of the test's own on the service's table, with every repository on it, to
 * prepare and check the table (not the service's clients: its requests are not counted with
 * theirs); destroyed in an `afterAll` registered here, so before a service set up earlier stops.
 */
export function useTable(
  service: Pick<LocalService, 'dynamodbEndpoint' | 'tableName'>,
  limits?: DocumentClientOptions['limits'],
): { doc: DocumentClient; repos: Repos } {
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint, limits });
  afterAll(() => doc.destroy());
  return { doc, repos: createRepos({ doc, table: service.tableName }) };
}

/**
 * Gives the authorization server's own DynamoDB client, in this test file's process, a per-attempt
 * limit of `ms` instead of the service's 1 s. For a test whose one large request (a 100-item
 * transaction) can keep DynamoDB Local past 1 s while the other test files load a 2-core machine:
 * what the service does at its limit (503, nothing written) is slow-dependency.test.ts's subject,
 * with the real limit. Call it after the service started (the client reads the environment it sets).
 */
export async function loosenAuthStorageLimit(ms = 10_000): Promise<void> {
  const { doc } = await import('#shared/runtime');
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
