import { createHash, randomUUID } from 'node:crypto';
import { ACCESS_TOKEN_TTL_SECONDS, issueAccessToken } from '#shared/auth/access-token';
import { authenticateClient, type ClientCredentials } from '#shared/auth/client-auth';
import { hashSecret, openWith, randomToken, safeEqual, sealWith } from '#shared/auth/secrets';
import type { TokenSigner } from '#shared/auth/signer';
import { GrantWriteError, type GrantRepo, type RevocationReason } from '#shared/data/grant-repo';
import { parseScopeString } from '#shared/domain/scopes';
import type { RefreshToken } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';

/** How long a retry of an already rotated refresh token still gets the same successor back. */
export const REFRESH_GRACE_SECONDS = 30;
const ROTATION_ATTEMPTS = 8;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface TokenServiceDeps {
  grants: GrantRepo;
  /** The signer, or a function giving the signer of the moment (the active key of a rotation). */
  signer: Promise<TokenSigner> | (() => Promise<TokenSigner>);
  issuer: string;
  audience: string;
  /** The clock; tests control it. */
  now?: () => Date;
  graceSeconds?: number;
}

export type TokenService = ReturnType<typeof createTokenService>;

/** The token endpoint's two grants and revocation (SPEC.md §5.4, §5.5; RFC 6749, RFC 7009). */
export function createTokenService(deps: TokenServiceDeps) {
  const now = deps.now ?? (() => new Date());
  const graceMs = (deps.graceSeconds ?? REFRESH_GRACE_SECONDS) * 1000;
  /** The item unless past its TTL: DynamoDB deletes expired items late, and until then they are not there. */
  const live = <T extends { expiresAt?: number }>(item: T | undefined): T | undefined =>
    (item && (item.expiresAt === undefined || item.expiresAt > epochSeconds(now())) ? item : undefined);

  /**
   * Signs the access token. Called before a grant is written, so that a failed signature (kms:Sign
   * throttled or down) leaves the code or refresh token unspent and the client's retry can succeed.
   */
  function signAccessToken(userId: string, clientId: string, scopes: string[]): Promise<string> {
    const signer = typeof deps.signer === 'function' ? deps.signer() : deps.signer;
    return signer.then((signer) => issueAccessToken(signer, {
      issuer: deps.issuer, audience: deps.audience, userId, clientId, scopes, now: now(),
    }));
  }

  function respond(accessToken: string, scopes: string[], refreshToken: string): TokenResponse {
    countMetric(METRIC.tokensIssued);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  }

  return {
    /**
     * grant_type=authorization_code. Two DynamoDB requests: BatchGetItem, TransactWriteItems. The
     * access token is signed before the code is spent: if signing fails, nothing is written. Of
     * concurrent exchanges each signs, one wins the write, the others discard their token.
     */
    async exchangeCode(credentials: ClientCredentials, form: { code: string; redirectUri: string; codeVerifier?: string }): Promise<TokenResponse> {
      const codeHash = hashSecret(form.code);
      const { code: stored, client } = await deps.grants.getCodeAndClient(codeHash, credentials.clientId);
      authenticateClient(client, credentials, now());
      const invalid = () => new InvalidGrantError('The authorization code is invalid, expired or already used.');
      const code = live(stored);
      if (!code || code.clientId !== credentials.clientId) throw invalid();
      if (code.usedAt) {
        // RFC 6749 §4.1.2: a replayed code revokes what it produced (during the code's 10 minutes).
        if (code.familyId) await revokeFamily(deps.grants, code.familyId, code.refreshTokenHash, now(), 'code_replay');
        throw invalid();
      }
      if (form.redirectUri !== code.redirectUri) {
        throw new InvalidGrantError('redirect_uri does not match the authorization request.');
      }
      if (code.codeChallenge !== undefined || form.codeVerifier !== undefined) {
        if (code.codeChallenge === undefined || form.codeVerifier === undefined || !CODE_VERIFIER.test(form.codeVerifier)
          || !safeEqual(createHash('sha256').update(form.codeVerifier).digest('base64url'), code.codeChallenge)) {
          throw new InvalidGrantError('PKCE verification failed.');
        }
      }

      const accessToken = await signAccessToken(code.userId, code.clientId, code.scopes);
      const refreshToken = randomToken();
      const familyId = randomUUID();
      try {
        await deps.grants.redeemCode(codeHash, formatTimestamp(now()), {
          familyId, clientId: code.clientId, userId: code.userId, scopes: code.scopes, status: 'active', createdAt: formatTimestamp(now()),
        }, {
          tokenHash: hashSecret(refreshToken), familyId, clientId: code.clientId, userId: code.userId, scopes: code.scopes, status: 'active',
        });
      } catch (error) {
        if (error instanceof GrantWriteError) {
          // Another exchange of the same code won: this one is a replay.
          const { code: winner } = await deps.grants.getCodeAndClient(codeHash, credentials.clientId);
          if (winner?.familyId) await revokeFamily(deps.grants, winner.familyId, winner.refreshTokenHash, now(), 'code_replay');
          throw invalid();
        }
        throw error;
      }
      return respond(accessToken, code.scopes, refreshToken);
    },

    /**
     * grant_type=refresh_token: rotates the token (two DynamoDB requests). A retry of a just rotated
     * token, within the grace window and while its successor is unused, gets that same successor;
     * any other reuse revokes the whole family. The access token is signed before the rotation is
     * written (and only once, however many attempts a race takes): if signing fails, nothing is.
     */
    async refresh(credentials: ClientCredentials, form: { refreshToken: string; scope?: string }): Promise<TokenResponse> {
      const tokenHash = hashSecret(form.refreshToken);
      const { token: stored, client } = await deps.grants.getRefreshTokenAndClient(tokenHash, credentials.clientId);
      authenticateClient(client, credentials, now());
      const invalid = () => new InvalidGrantError('The refresh token is invalid or has been revoked.');
      // A rotated token past its TTL (REUSE_DETECTION_SECONDS) is unknown: refused, and no reuse.
      const first = live(stored);
      if (!first || first.clientId !== credentials.clientId) throw invalid();
      const scopes = narrowScopes(first.scopes, form.scope);

      // Every attempt acts for the same user, client and scopes: one token serves them all.
      let accessToken: Promise<string> | undefined;
      const signOnce = () => (accessToken ??= signAccessToken(first.userId, first.clientId, scopes));

      let token: RefreshToken | undefined = first;
      for (let attempt = 0; attempt < ROTATION_ATTEMPTS && token; attempt++) {
        if (token.status === 'rotated') {
          const successor = await graceSuccessor(token, form.refreshToken);
          if (!successor) {
            // Reuse. The successor is the family's current token unless it was rotated too.
            countMetric(METRIC.refreshTokenReuse);
            await revokeFamily(deps.grants, token.familyId, token.successorHash, now(), 'refresh_token_reuse');
            throw invalid();
          }
          return respond(await signOnce(), scopes, successor);
        }
        const signed = await signOnce();
        const next = randomToken();
        try {
          await deps.grants.rotateRefreshToken(token, {
            tokenHash: hashSecret(next), familyId: token.familyId, clientId: token.clientId, userId: token.userId,
            scopes: token.scopes, status: 'active',
          }, sealWith(form.refreshToken, next), now().getTime());
          return respond(signed, scopes, next);
        } catch (error) {
          if (!(error instanceof GrantWriteError)) throw error;
          if (error.reason === 'family_revoked') throw invalid();
          // Lost a race with a concurrent rotation of the same token: look again.
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
          token = live(await deps.grants.getRefreshToken(tokenHash));
        }
      }
      throw invalid();
    },

    revoke: (credentials: ClientCredentials, token: string) => revokeToken(deps.grants, credentials, token, now()),
  };

  async function graceSuccessor(token: RefreshToken, presented: string): Promise<string | undefined> {
    if (!token.successorHash || !token.sealedSuccessor || token.rotatedAt === undefined) return undefined;
    if (now().getTime() - token.rotatedAt > graceMs) return undefined;
    const [successor, family] = await Promise.all([
      deps.grants.getRefreshToken(token.successorHash),
      deps.grants.getFamily(token.familyId),
    ]);
    if (successor?.status !== 'active' || family?.status !== 'active') return undefined;
    return openWith(presented, token.sealedSuccessor);
  }
}

/**
 * RFC 7009: revokes a refresh token's family; access tokens and unknown tokens (a rotated token past
 * its TTL among them) are accepted as is. An active token is its family's current one, so this is
 * one transaction after the read. Needs no signer, so the revocation endpoint does not bundle one.
 */
export async function revokeToken(grants: GrantRepo, credentials: ClientCredentials, token: string, now = new Date()): Promise<void> {
  const { token: refresh, client } = await grants.getRefreshTokenAndClient(hashSecret(token), credentials.clientId);
  authenticateClient(client, credentials, now);
  if (!refresh || refresh.clientId !== credentials.clientId) return;
  if (refresh.expiresAt !== undefined && refresh.expiresAt <= epochSeconds(now)) return;
  await revokeFamily(grants, refresh.familyId, refresh.status === 'active' ? refresh.tokenHash : refresh.successorHash, now, 'token_revoked');
}

/** Revokes a family, counted in the GrantsRevoked metric. */
async function revokeFamily(grants: Pick<GrantRepo, 'revokeFamily'>, familyId: string, currentHint: string | undefined, now: Date, reason: RevocationReason) {
  await grants.revokeFamily(familyId, currentHint, now, reason);
  countMetric(METRIC.grantsRevoked);
}

function narrowScopes(granted: string[], requested: string | undefined): string[] {
  if (requested === undefined) return granted;
  const scopes = parseScopeString(requested);
  const extra = scopes.filter((s) => !granted.includes(s));
  if (scopes.length === 0 || extra.length > 0) {
    throw new InvalidScopeError(`The refresh token does not grant: ${extra.join(' ') || '(empty scope)'}.`);
  }
  return scopes;
}
