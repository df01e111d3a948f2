import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import { newAuthorizationCode } from '#shared/oauth/grant-tokens';
import { hashSecret } from '#shared/secrets';
import { tokenEndpoint } from '#shared/oauth/token-endpoint';
import { createTokenService } from '#shared/oauth/token-service';
import { createClientRepo } from '#shared/data/client-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { lambdaContext } from '#local/lambda-context';
import { freshTable } from '../support/service';
import { createKeyring } from '#shared/keys/keyring';

const ISSUER = 'https://auth.example.test';
const AUDIENCE = 'https://api.example.test';
const REDIRECT_URI = 'https://app.example.test/callback';
const SECRET = 'client-secret-that-is-long-enough-0123456789abcdef';

/** When each DynamoDB request of a client started and ended, in the order they happened. */
function timeline(doc: DocumentClient) {
  const events: string[] = [];
  doc.middlewareStack.add((next, context) => async (args) => {
    events.push(`start ${String(context.commandName)}`);
    try {
      return await next(args);
    } finally {
      events.push(`end ${String(context.commandName)}`);
    }
  }, { step: 'initialize', name: `timeline-${randomUUID()}` });
  return events;
}

describe('token endpoint, a fresh instance (no signing-key schedule read yet)', () => {
  let doc: DocumentClient;
  let table: string;
  let keyDir: string;

  beforeAll(async () => {
    ({ doc, table } = await freshTable());
    keyDir = mkdtempSync(join(tmpdir(), 'dus-token-prefetch-'));
  });
  afterAll(() => {
    doc?.destroy();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it('reads the signing-key schedule alongside the code and client, not after them, and still makes the grant\'s two requests', async () => {
    // Prepare: a client and a code; then the endpoint as post-token.ts builds it, over a new keyring.
    const clientId = `client-${randomUUID()}`;
    await createClientRepo({ doc, table }).createClient({
      clientId, secretHash: hashSecret(SECRET), name: 'Prefetch test', description: 'Test', website: 'https://app.example.test',
      redirectUris: [REDIRECT_URI], developerId: randomUUID(), developerName: 'Test Developer', createdAt: '2026-01-01T00:00:00.000',
    });
    const grants = createGrantRepo({ doc, table });
    const [userId, grantGeneration] = [randomUUID(), randomUUID()];
    await grants.saveConsent({ userId, clientId, scopes: ['read_device'], grantedAt: '2026-01-01T00:00:00.000', grantGeneration });
    const { code, stored } = newAuthorizationCode({
      clientId, userId, redirectUri: REDIRECT_URI, scopes: ['read_device'], expiresAt: Math.floor(Date.now() / 1000) + 600, grantGeneration,
    });
    await grants.createCode(stored);
    const keyring = createKeyring({ repo: createSigningKeyRepo({ doc, table }), source: createLocalKeyStore(join(keyDir, 'signing-key.pem')) });
    const tokens = createTokenService({ grants, signer: () => keyring.currentSigner(), issuer: ISSUER, audience: AUDIENCE });
    const endpoint = tokenEndpoint(tokens, { prefetchSigner: () => keyring.currentSigner() });
    const events = timeline(doc);

    // Act
    const result = await endpoint({
      version: '2.0', routeKey: 'POST /oauth/token', rawPath: '/oauth/token', rawQueryString: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      requestContext: {
        accountId: '123456789012', apiId: 'auth', domainName: 'auth.example.test', domainPrefix: 'auth',
        http: { method: 'POST', path: '/oauth/token', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
        requestId: randomUUID(), routeKey: 'POST /oauth/token', stage: '$default', time: '01/Mar/2026:10:00:00 +0000', timeEpoch: 0,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId, client_secret: SECRET }).toString(),
      isBase64Encoded: false,
    }, lambdaContext('post-token', randomUUID()));

    // Assess: the schedule's GetItem was sent before the BatchGetItem answered.
    expect(result.statusCode).toBe(200);
    expect(events.indexOf('start GetItemCommand')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('start GetItemCommand')).toBeLessThan(events.indexOf('end BatchGetItemCommand'));
    expect(events.filter((e) => e.startsWith('start')).sort()).toEqual(['start BatchGetItemCommand', 'start GetItemCommand', 'start UpdateItemCommand']);
  });
});
