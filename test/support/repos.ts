import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { createBatchReader } from '#shared/data/batch-read';
import { createDocumentClient, type RepoDeps } from '#shared/data/dynamodb';
import { createClaimRepo } from '#shared/data/claim-repo';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceGrantRepo } from '#shared/data/device-grant-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createErasureRepo } from '#shared/data/erasure-repo';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createFactorSummaryRepo } from '#shared/data/factor-summary-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo } from '#shared/data/link-repo';
import { createMailLimitRepo } from '#shared/data/mail-limit-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { createPresenceRepo } from '#shared/data/presence-repo';
import { createSerialRepo } from '#shared/data/serial-repo';
import { createRecoveryCodeRepo } from '#shared/data/recovery-code-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { createThrottleRepo } from '#shared/data/throttle-repo';
import { createKnownBrowserRepo } from '#shared/data/known-browser-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { createTable } from '#local/dynamodb-local';
import { countRequests } from './count-requests';

/** Every repository of shared/data/ on one client and table, for tests that prepare or check the table. */
export function createRepos(deps: RepoDeps) {
  return {
    users: createUserRepo(deps),
    claims: createClaimRepo(deps),
    clients: createClientRepo(deps),
    grants: createGrantRepo(deps),
    deviceGrants: createDeviceGrantRepo(deps),
    devices: createDeviceRepo(deps),
    links: createLinkRepo(deps),
    mailLimits: createMailLimitRepo(deps),
    sessions: createSessionRepo(deps),
    throttle: createThrottleRepo(deps),
    knownBrowsers: createKnownBrowserRepo(deps),
    factors: createFactorRepo(deps),
    factorSummaries: createFactorSummaryRepo(deps),
    passkeys: createPasskeyRepo(deps),
    presence: createPresenceRepo(deps),
    serials: createSerialRepo(deps),
    recoveryCodes: createRecoveryCodeRepo(deps),
    signingKeys: createSigningKeyRepo(deps),
    webhooks: createWebhookRepo(deps),
    erasure: createErasureRepo(deps),
  };
}

export type Repos = ReturnType<typeof createRepos>;

/** The name of a table not yet made on the run's DynamoDB Local, and a document client for it (no request is made). */
export function newTableClient() {
  const endpoint = inject('dynamodbEndpoint');
  const table = `test-${randomUUID()}`;
  // Tests drive DynamoDB Local with up to 50 concurrent transactions (and 120 reads at once) on a
  // 2-core machine, where one can take longer than the service's 1 s per attempt, or its 0.5 s to
  // connect; the service's own clients keep those limits.
  return { endpoint, table, doc: createDocumentClient({ endpoint, limits: { requestTimeoutMs: 10_000, connectionTimeoutMs: 5_000 } }) };
}

/**
 * For the tests of the describe it is called in: a fresh table of the run's DynamoDB Local (made in
 * a `beforeAll`), a client of their own on it with every repository and the batch reader, and that
 * client's requests counted (`keepInputs`: with their inputs), the count reset before each test. The
 * client is destroyed after them.
 */
export function useRepoTable({ keepInputs = false }: { keepInputs?: boolean } = {}) {
  const { endpoint, table, doc } = newTableClient();
  const requests = countRequests(doc, { keepInputs });
  beforeAll(() => createTable(endpoint, table));
  beforeEach(() => requests.reset());
  afterAll(() => {
    requests.detach();
    doc.destroy();
  });
  return { doc, table, repos: createRepos({ doc, table }), batch: createBatchReader({ doc, table }), requests };
}
