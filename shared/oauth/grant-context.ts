import { issueAccessToken } from '#shared/oauth/access-token';
import { authenticateClient, type ClientCredentials } from '#shared/oauth/client-auth';
import type { ClientCache } from '#shared/oauth/client-cache';
import type { TokenSigner } from '#shared/keys/signer';
import type { GrantRepo } from '#shared/data/grant-repo';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { TOKEN_SERVICE_USES } from '#shared/oauth/token-service';
import type { Client } from '#shared/domain/client';
import { ACCESS_TOKEN_TTL_SECONDS, type Consent, type RevocationReason, type TokenFamily } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';
import { hashSecret } from '#shared/secrets';

// What the token endpoint's grants (shared/oauth/grants/) share: the clock, the signer, the client
// authentication with its cache, and the answer.

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/**
 * The repository operation of every grant's client authentication (withClient): the client read
 * again after a grant authenticated from the cache is refused. Each grant's `*_USES` holds it.
 */
export const CLIENT_AUTHENTICATION_USES = { grants: ['getFamilyClientAndConsent'] } as const satisfies UsesDeclaration;

type TokenRepos = Uses<typeof TOKEN_SERVICE_USES>;

export interface TokenServiceDeps {
  /** The grants' items, with the operations the grants declare (TOKEN_SERVICE_USES). */
  grants: TokenRepos['grants'];
  /** The device authorization grant's items (RFC 8628); without them the device flow is not offered. */
  deviceGrants?: TokenRepos['deviceGrants'];
  /** The signer, or a function giving the signer of the moment (the active key of a rotation). */
  signer: Promise<TokenSigner> | (() => Promise<TokenSigner>);
  issuer: string;
  audience: string;
  /** The clock; tests control it. */
  now?: () => Date;
  /** Client items of the last seconds (the token endpoint's instance); without it every call reads the client. */
  clientCache?: ClientCache;
}

/**
 * What a grant of shared/oauth/grants/ is given: the context, its repositories narrowed to `R`, the
 * operations it declares (`Uses<typeof ITS_USES>`), so that calling one it did not declare does not
 * compile. The device grants' repository is there only in a token service made with it.
 */
export type GrantContext<R extends { grants: object }> = Omit<ReturnType<typeof createGrantContext>, 'grants' | 'deviceGrants'> & Omit<R, 'deviceGrants'> & {
  deviceGrants?: R extends { deviceGrants: infer DeviceGrants } ? DeviceGrants : unknown;
};

export function createGrantContext(deps: TokenServiceDeps) {
  const now = deps.now ?? (() => new Date());

  /** Keeps what a read found of the client (nothing: a deleted client is forgotten). */
  function cacheClient(clientId: string, client: Client | undefined): void {
    if (client) deps.clientCache?.remember(client);
    else deps.clientCache?.forget(clientId);
  }

  return {
    grants: deps.grants,
    deviceGrants: deps.deviceGrants,
    issuer: deps.issuer,
    now,

    /** The item unless past its TTL: DynamoDB deletes expired items late, and until then they are not there. */
    live: <T extends { expiresAt?: number }>(item: T | undefined): T | undefined =>
      (item && (item.expiresAt === undefined || item.expiresAt > epochSeconds(now())) ? item : undefined),

    /**
     * Signs the access token. Called before a grant is written, so that a failed signature (kms:Sign
     * throttled or down) leaves the code or refresh token unspent and the client's retry can succeed.
     */
    signAccessToken(userId: string, clientId: string, scopes: string[]): Promise<string> {
      const signer = typeof deps.signer === 'function' ? deps.signer() : deps.signer;
      return signer.then((signer) => issueAccessToken(signer, {
        issuer: deps.issuer, audience: deps.audience, userId, clientId, scopes, now: now(),
      }));
    },

    /**
     * Reads a grant with its client and consent in one BatchGetItem, authenticates the client, and
     * runs `grant` on what was read. The read leaves the client out when the cache has its item and
     * the caller presents that item's current secret (client-cache.ts); a read of the client refreshes
     * the cache. When a grant authenticated from the cache is refused, the client is read again
     * before the answer, so that a deleted application or a secret no longer valid gets
     * invalid_client, as without a cache.
     */
    async withClient<T extends { client: Client | undefined }, R>(
      credentials: ClientCredentials, read: (readClient: boolean) => Promise<T>, grant: (found: T) => Promise<R>,
    ): Promise<R> {
      // A public client presents no secret: its item is always read with the grant.
      const cached = credentials.clientSecret === undefined ? undefined
        : deps.clientCache?.withCurrentSecret(credentials.clientId, hashSecret(credentials.clientSecret));
      const found = await read(cached === undefined);
      if (cached === undefined) cacheClient(credentials.clientId, found.client);
      authenticateClient(cached ?? found.client, credentials, now());
      try {
        return await grant(found);
      } catch (error) {
        if (cached !== undefined && (error instanceof InvalidGrantError || error instanceof InvalidScopeError)) {
          const { client } = await deps.grants.getFamilyClientAndConsent(undefined, credentials.clientId);
          cacheClient(credentials.clientId, client);
          authenticateClient(client, credentials, now());
        }
        throw error;
      }
    },

    respond(accessToken: string, scopes: string[], refreshToken: string): TokenResponse {
      countMetric(METRIC.tokensIssued);
      return {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        refresh_token: refreshToken,
        scope: scopes.join(' '),
      };
    },
  };
}

/** Whether the consent a code or family was issued under still stands: it exists, with the family's generation. */
export const consentStands = (consent: Consent | undefined, family: Pick<TokenFamily, 'grantGeneration'>) =>
  consent !== undefined && consent.grantGeneration === family.grantGeneration;

/** Revokes a family, counted in the GrantsRevoked metric. */
export async function revokeFamily(grants: Pick<GrantRepo, 'revokeFamily'>, familyId: string, now: Date, reason: RevocationReason) {
  await grants.revokeFamily(familyId, now, reason);
  countMetric(METRIC.grantsRevoked);
}
