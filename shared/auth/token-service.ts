import { createHash, randomUUID } from 'node:crypto';
import { ACCESS_TOKEN_TTL_SECONDS, issueAccessToken } from '#shared/auth/access-token';
import { authenticateClient, type ClientCredentials } from '#shared/auth/client-auth';
import { hashSecret, openWith, randomToken, safeEqual, sealWith } from '#shared/auth/secrets';
import type { TokenSigner } from '#shared/auth/signer';
import { GrantWriteError, type GrantRepo, type RevocationReason } from '#shared/data/grant-repo';
import { parseScopeString } from '#shared/domain/scopes';
import type { Consent, TokenFamily } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { InvalidGrantError, InvalidScopeError } from '#shared/errors';
import { countMetric, METRIC } from '#shared/metrics';

/** How long a retry of an already rotated refresh token still gets the same successor back. */
export const REFRESH_GRACE_SECONDS = 30;
const ROTATION_ATTEMPTS = 8;
/** Attempts of a code exchange whose transaction met a transient conflict on the consent item. */
const REDEMPTION_ATTEMPTS = 4;
/**
 * A refresh token is `<user id>.<family id>.<256-bit random token>`. The ids are no secret: they
 * name the family item and the consent, so a refresh reads both (and the client) in one
 * BatchGetItem. Only the hash of the whole value is stored, in its family.
 */
const REFRESH_TOKEN = /^([0-9A-Za-z-]{1,64})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[0-9A-Za-z_-]{43}$/;

/** The user and family a refresh token names, if it has the shape of one of ours. */
export function refreshTokenNames(token: string): { userId: string; familyId: string } | undefined {
  const match = REFRESH_TOKEN.exec(token);
  return match ? { userId: match[1]!, familyId: match[2]! } : undefined;
}

/** A new refresh token of a family. */
export const newRefreshToken = (userId: string, familyId: string) => `${userId}.${familyId}.${randomToken()}`;

/** Whether the consent a family was issued under still stands: it exists, with the family's generation. */
const consentStands = (consent: Consent | undefined, family: TokenFamily) => consent !== undefined && consent.grantGeneration === family.grantGeneration;

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
      if (code.usedAt || code.replayedAt) {
        // RFC 6749 §4.1.2: a replayed code revokes what it produced (during the code's 10 minutes).
        if (code.familyId) await revokeFamily(deps.grants, code.familyId, now(), 'code_replay');
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
      const familyId = randomUUID();
      const refreshToken = newRefreshToken(code.userId, familyId);
      const generation = code.grantGeneration === undefined ? {} : { grantGeneration: code.grantGeneration };
      for (let attempt = 1; ; attempt++) {
        try {
          await deps.grants.redeemCode(codeHash, formatTimestamp(now()), {
            familyId, clientId: code.clientId, userId: code.userId, scopes: code.scopes, status: 'active', createdAt: formatTimestamp(now()),
            activeTokenHash: hashSecret(refreshToken), ...generation,
          });
          return respond(accessToken, code.scopes, refreshToken);
        } catch (error) {
          if (!(error instanceof GrantWriteError)) throw error;
          // The consent was revoked (or given again) since the code was issued: nothing was written.
          if (error.reason === 'grant_revoked') throw invalid();
          if (error.reason === 'code_used') {
            // Another exchange of the same code won or is under way: this one is a replay. Marking the
            // code first means the other either committed before (its family is in the marked code,
            // and is revoked) or cannot commit at all.
            const marked = await deps.grants.markCodeReplayed(codeHash, formatTimestamp(now()));
            if (marked?.familyId) await revokeFamily(deps.grants, marked.familyId, now(), 'code_replay');
            throw invalid();
          }
          if (attempt >= REDEMPTION_ATTEMPTS) throw error;
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
        }
      }
    },

    /**
     * grant_type=refresh_token: rotates the token (two DynamoDB requests: BatchGetItem of the family,
     * the client and the consent; UpdateItem of the family, on condition that the presented token is
     * still its current one). The previous token, presented again within the grace window while its
     * successor is unused, gets that same successor; any other token of the family presented again
     * is reuse and revokes the family. The access token is signed before the rotation is written (and
     * only once, however many attempts a race takes): if signing fails, nothing is.
     */
    async refresh(credentials: ClientCredentials, form: { refreshToken: string; scope?: string }): Promise<TokenResponse> {
      const names = refreshTokenNames(form.refreshToken);
      const presentedHash = hashSecret(form.refreshToken);
      const { family: stored, client, consent } = await deps.grants.getFamilyClientAndConsent(names?.familyId, credentials.clientId, names?.userId);
      authenticateClient(client, credentials, now());
      const invalid = () => new InvalidGrantError('The refresh token is invalid or has been revoked.');
      // A revoked family past its TTL (REVOKED_GRANT_SECONDS) is unknown: refused, and nothing else.
      const first = live(stored);
      if (!names || !first || first.clientId !== credentials.clientId || first.userId !== names.userId) throw invalid();
      const scopes = narrowScopes(first.scopes, form.scope);

      // Every attempt acts for the same user, client and scopes: one token serves them all.
      let accessToken: Promise<string> | undefined;
      const signOnce = () => (accessToken ??= signAccessToken(first.userId, first.clientId, scopes));

      let family: TokenFamily | undefined = first;
      for (let attempt = 0; attempt < ROTATION_ATTEMPTS && family?.status === 'active'; attempt++) {
        if (!consentStands(consent, family)) {
          // The user revoked the application (or authorized it again) and the revocation's Query
          // missed this family (index lag): it ends here, with its TTL.
          await revokeFamily(deps.grants, family.familyId, now(), 'user_revoked');
          throw invalid();
        }
        if (family.activeTokenHash === presentedHash) {
          const signed = await signOnce();
          const next = newRefreshToken(family.userId, family.familyId);
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
    },

    revoke: (credentials: ClientCredentials, token: string) => revokeToken(deps.grants, credentials, token, now()),
  };

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
  const names = refreshTokenNames(token);
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
