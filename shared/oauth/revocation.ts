import { authenticateClient, type ClientCredentials } from '#shared/oauth/client-auth';
import { revokeFamily } from '#shared/oauth/grant-context';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import type { Uses, UsesDeclaration } from '#shared/data/uses';

/** The repository operations revokeToken uses (its function's grants: functions/needs.ts). */
export const REVOKE_TOKEN_USES = { grants: ['getFamilyClientAndConsent', 'revokeFamily'] } as const satisfies UsesDeclaration;

/**
 * RFC 7009 (docs/api.md#revocation): revokes a refresh token's family (one BatchGetItem of the family
 * and the client, one UpdateItem); access tokens and unknown tokens are accepted as is. Any token
 * that names an active family of this client and its user revokes it: a token of the family that is
 * no longer current would revoke it at the token endpoint too (reuse). Needs no signer, so the
 * revocation endpoint does not bundle one.
 */
export async function revokeToken(grants: Uses<typeof REVOKE_TOKEN_USES>['grants'], credentials: ClientCredentials, token: string, now = new Date()): Promise<void> {
  const names = grantTokenNames(token);
  const { family, client } = await grants.getFamilyClientAndConsent(names?.familyId, credentials.clientId);
  authenticateClient(client, credentials, now);
  if (!names || !family || family.clientId !== credentials.clientId || family.userId !== names.userId || family.status !== 'active') return;
  await revokeFamily(grants, family.familyId, now, 'token_revoked');
}
