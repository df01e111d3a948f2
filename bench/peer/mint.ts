import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createGrantRepo } from '#shared/data/grant-repo';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { formatTimestamp } from '#shared/domain/time';
import { newAuthorizationCode, newGrantToken } from '#shared/oauth/grant-tokens';
import { hashSecret } from '#shared/secrets';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import type { Minted } from './protocol.ts';

// Our grants, made the way the service stores them, outside any timing: a code is its family's first
// state (createCode); a refresh token is the first of a family whose code was redeemed through the
// repository. For the demo user and the demo client, whose consent is recorded once.

export interface Minter {
  mint(kind: 'code' | 'refresh', count: number): Promise<Minted[]>;
  stop(): void;
}

/** A minter on the service's table (its own client, with a patient timeout: it runs on a busy machine). */
export async function createMinter(endpoint: string, table: string): Promise<Minter> {
  const doc = createDocumentClient({ endpoint, limits: { requestTimeoutMs: 30_000 } });
  const grants = createGrantRepo({ doc, table });
  const scopes = [...ALL_SCOPES];
  const clientId = DEMO_CLIENT.clientId;
  const userId = DEMO_USERS[0].user.id;
  const redirectUri = DEMO_CLIENT.redirectUris[0];
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
      clientId, userId, redirectUri, scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600,
      codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'), ...generation,
    });
    await grants.createCode(stored);
    if (kind === 'code') return { value: code, codeVerifier };
    const token = newGrantToken(userId, stored.familyId);
    await grants.redeemCode(stored.familyId, stored.codeHash, hashSecret(token), new Date());
    return { value: token };
  };
  return {
    async mint(kind, count) {
      const values: Minted[] = [];
      for (let i = 0; i < count; i += 16) {
        values.push(...await Promise.all(Array.from({ length: Math.min(16, count - i) }, () => mintOne(kind))));
      }
      return values;
    },
    stop: () => doc.destroy(),
  };
}
