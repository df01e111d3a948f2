import { createHash } from 'node:crypto';
import { ACCESS_TOKEN_TTL_SECONDS, issueAccessToken } from '#shared/auth/access-token';
import { authenticateClient, type ClientCredentials } from '#shared/auth/client-auth';
import type { ClientCache } from '#shared/auth/client-cache';
import { grantTokenNames, newGrantToken, type GrantTokenNames } from '#shared/auth/grant-tokens';
import { openWith, sealWith } from '#shared/auth/secrets';
import type { TokenSigner } from '#shared/auth/signer';
import { GrantWriteError, type GrantRepo } from '#shared/data/grant-repo';
import { parseScopeString } from '#shared/domain/scopes';
import type { Client } from '#shared/domain/client';
import type { Consent, GrantItem, RevocationReason, TokenFamily } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';
import { hashSecret, safeEqual } from '#shared/secrets';

/** How long a retry of an already rotated refresh token still gets the same successor back. */
export const REFRESH_GRACE_SECONDS = 30;
const ROTATION_ATTEMPTS = 8;
/** Attempts of a code exchange that met a revocation's transaction holding the code. */
const REDEMPTION_ATTEMPTS = 4;
/** Whether the consent a code or family was issued under still stands: it exists, with the family's generation. */
const consentStands = (consent: Consent | undefined, family: Pick<TokenFamily, 'grantGeneration'>) => consent !== undefined && consent.grantGeneration === family.grantGeneration;

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
  /** Client items of the last seconds (the token endpoint's instance); without it every call reads the client. */
  clientCache?: ClientCache;
}

export type TokenService = ReturnType<typeof createTokenService>;

/**
 * The token endpoint's two grants and revocation (docs/api.md#token-request-authorization-code,
 * docs/api.md#token-request-refresh, docs/api.md#revocation; RFC 6749, RFC 7009).
 */
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

  /** Keeps what a read found of the client (nothing: a deleted client is forgotten). */
  function cacheClient(clientId: string, client: Client | undefined): void {
    if (client) deps.clientCache?.remember(client);
    else deps.clientCache?.forget(clientId);
  }

  /**
   * Reads a grant with its client and consent in one BatchGetItem, authenticates the client, and
   * runs `grant` on what was read. The read leaves the client out when the cache has its item and
   * the caller presents that item's current secret (client-cache.ts); a read of the client refreshes
   * the cache. When a grant authenticated from the cache is refused, the client is read again
   * before the answer, so that a deleted application or a secret no longer valid gets
   * invalid_client, as without a cache.
   */
  async function withClient<T extends { client: Client | undefined }, R>(
    credentials: ClientCredentials, read: (readClient: boolean) => Promise<T>, grant: (found: T) => Promise<R>,
  ): Promise<R> {
    const cached = deps.clientCache?.withCurrentSecret(credentials.clientId, hashSecret(credentials.clientSecret));
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
     * grant_type=authorization_code. Two DynamoDB requests: BatchGetItem of the code (in its family's
     * item), the client (unless withClient has it) and the consent; UpdateItem that makes the code its family, on condition that
     * it is still pending. The access token is signed before the code is spent: if signing fails,
     * nothing is written. Of concurrent exchanges each signs, one wins the write, and the others,
     * finding the code spent, revoke the family it became (a replay).
     */
    exchangeCode(credentials: ClientCredentials, form: { code: string; redirectUri: string; codeVerifier?: string }): Promise<TokenResponse> {
      const names = grantTokenNames(form.code);
      return withClient(credentials,
        (readClient) => deps.grants.getCodeClientAndConsent(names?.familyId, credentials.clientId, names?.userId, readClient),
        ({ code, consent }) => redeem(credentials, form, names, code, consent));
    },

    /**
     * grant_type=refresh_token: rotates the token (two DynamoDB requests: BatchGetItem of the family,
     * the client (unless withClient has it) and the consent; UpdateItem of the family, on condition that the presented token is
     * still its current one). The previous token, presented again within the grace window while its
     * successor is unused, gets that same successor; any other token of the family presented again
     * is reuse and revokes the family. The access token is signed before the rotation is written (and
     * only once, however many attempts a race takes): if signing fails, nothing is.
     */
    refresh(credentials: ClientCredentials, form: { refreshToken: string; scope?: string }): Promise<TokenResponse> {
      const names = grantTokenNames(form.refreshToken);
      return withClient(credentials,
        (readClient) => deps.grants.getFamilyClientAndConsent(names?.familyId, credentials.clientId, names?.userId, readClient),
        ({ family, consent }) => rotate(credentials, form, names, family, consent));
    },

    revoke: (credentials: ClientCredentials, token: string) => revokeToken(deps.grants, credentials, token, now()),
  };

  /** The code exchange once the client is authenticated: `stored` and `consent` as read with it. */
  async function redeem(
    credentials: ClientCredentials, form: { code: string; redirectUri: string; codeVerifier?: string },
    names: GrantTokenNames | undefined, stored: GrantItem | undefined, consent: Consent | undefined,
  ): Promise<TokenResponse> {
    const codeHash = hashSecret(form.code);
    const invalid = () => new InvalidGrantError('The authorization code is invalid, expired or already used.');
    // The hash covers the whole value, user id included: a code that names a family but is not its code matches none.
    if (!names || !stored || stored.clientId !== credentials.clientId || !stored.codeHash || !safeEqual(stored.codeHash, codeHash)) {
      throw invalid();
    }
    if (stored.status !== 'pending') {
      // RFC 6749 §4.1.2: a replayed code revokes what it produced (the family keeps the code's hash).
      if (stored.status === 'active') await revokeFamily(deps.grants, stored.familyId, now(), 'code_replay');
      throw invalid();
    }
    const code = live(stored);
    if (!code) throw invalid();
    if (form.redirectUri !== code.redirectUri) {
      throw new InvalidGrantError('redirect_uri does not match the authorization request.');
    }
    if (code.codeChallenge !== undefined || form.codeVerifier !== undefined) {
      if (code.codeChallenge === undefined || form.codeVerifier === undefined || !CODE_VERIFIER.test(form.codeVerifier)
        || !safeEqual(createHash('sha256').update(form.codeVerifier).digest('base64url'), code.codeChallenge)) {
        throw new InvalidGrantError('PKCE verification failed.');
      }
    }
    // The user revoked the application (or authorized it again) since the code was issued.
    if (!consentStands(consent, code)) throw invalid();

    const accessToken = await signAccessToken(code.userId, code.clientId, code.scopes);
    const refreshToken = newGrantToken(code.userId, code.familyId);
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.grants.redeemCode(code.familyId, codeHash, hashSecret(refreshToken), now());
        return respond(accessToken, code.scopes, refreshToken);
      } catch (error) {
        if (!(error instanceof GrantWriteError)) throw error;
        if (error.reason === 'code_used') {
          // Another exchange of the same code won since the read (a replay: its family is revoked),
          // or a revocation ended the code, or it expired (revoking it then changes nothing).
          await revokeFamily(deps.grants, code.familyId, now(), 'code_replay');
          throw invalid();
        }
        if (attempt >= REDEMPTION_ATTEMPTS) throw error;
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
      }
    }
  }

  /** The rotation once the client is authenticated: `stored` and `consent` as read with it. */
  async function rotate(
    credentials: ClientCredentials, form: { refreshToken: string; scope?: string },
    names: GrantTokenNames | undefined, stored: GrantItem | undefined, consent: Consent | undefined,
  ): Promise<TokenResponse> {
    const presentedHash = hashSecret(form.refreshToken);
    const invalid = () => new InvalidGrantError('The refresh token is invalid or has been revoked.');
    // A revoked family past its TTL (REVOKED_GRANT_SECONDS) is unknown: refused, and nothing else.
    const first = live(stored);
    if (!names || !first || first.clientId !== credentials.clientId || first.userId !== names.userId) throw invalid();
    const scopes = narrowScopes(first.scopes, form.scope);

    // Every attempt acts for the same user, client and scopes: one token serves them all.
    let accessToken: Promise<string> | undefined;
    const signOnce = () => (accessToken ??= signAccessToken(first.userId, first.clientId, scopes));

    let family: GrantItem | undefined = first;
    for (let attempt = 0; attempt < ROTATION_ATTEMPTS && family?.status === 'active'; attempt++) {
      if (!consentStands(consent, family)) {
        // The user revoked the application (or authorized it again) and the revocation's Query
        // missed this family (index lag): it ends here, with its TTL.
        await revokeFamily(deps.grants, family.familyId, now(), 'user_revoked');
        throw invalid();
      }
      if (family.activeTokenHash === presentedHash) {
        const signed = await signOnce();
        const next = newGrantToken(family.userId, family.familyId);
        try {
          await deps.grants.rotateRefreshToken(family.familyId, presentedHash, hashSecret(next), sealWith(form.refreshToken, next), now().getTime());
          return respond(signed, scopes, next);
        } catch (error) {
          if (!(error instanceof GrantWriteError)) throw error;
          // Lost a race with a concurrent rotation of the same token (or a revocation): look again.
          if (error.reason === 'conflict') await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
          family = await deps.grants.getFamily(family.familyId);
          continue;
        }
      }
      const successor = graceSuccessor(family, presentedHash, form.refreshToken);
      if (successor) return respond(await signOnce(), scopes, successor);
      // Reuse: a token of this family that is neither current nor a retry within the grace window.
      countMetric(METRIC.refreshTokenReuse);
      await revokeFamily(deps.grants, family.familyId, now(), 'refresh_token_reuse');
      throw invalid();
    }
    throw invalid();
  }

  /**
   * The successor a retry within the grace window gets again: the presented token is the one the
   * last rotation replaced (so its successor is still the current token: unused), the rotation is at
   * most the grace window old, and the family active (checked by the caller, as the consent is).
   */
  function graceSuccessor(family: TokenFamily, presentedHash: string, presented: string): string | undefined {
    if (family.previousTokenHash !== presentedHash || !family.sealedSuccessor || family.rotatedAt === undefined) return undefined;
    if (now().getTime() - family.rotatedAt > graceMs) return undefined;
    return openWith(presented, family.sealedSuccessor);
  }
}

/**
 * RFC 7009: revokes a refresh token's family (one BatchGetItem of the family and the client, one
 * UpdateItem); access tokens and unknown tokens are accepted as is. Any token that names an active
 * family of this client and its user revokes it: a token of the family that is no longer current
 * would revoke it at the token endpoint too (reuse). Needs no signer, so the revocation endpoint
 * does not bundle one.
 */
export async function revokeToken(grants: GrantRepo, credentials: ClientCredentials, token: string, now = new Date()): Promise<void> {
  const names = grantTokenNames(token);
  const { family, client } = await grants.getFamilyClientAndConsent(names?.familyId, credentials.clientId);
  authenticateClient(client, credentials, now);
  if (!names || !family || family.clientId !== credentials.clientId || family.userId !== names.userId || family.status !== 'active') return;
  await revokeFamily(grants, family.familyId, now, 'token_revoked');
}

/** Revokes a family, counted in the GrantsRevoked metric. */
async function revokeFamily(grants: Pick<GrantRepo, 'revokeFamily'>, familyId: string, now: Date, reason: RevocationReason) {
  await grants.revokeFamily(familyId, now, reason);
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
