/**
 * How long a rotated refresh token is kept. Presenting it again within this time (after the short
 * grace window for a retry) is reuse and revokes its whole family; after it, the token is unknown
 * (invalid_grant and nothing else). 30 days covers a client that refreshes at least once a month,
 * which is what catches a thief who rotated first: the rightful client comes back with the old token.
 */
export const REUSE_DETECTION_SECONDS = 30 * 24 * 3600;

/**
 * How long a revoked family and its last refresh token are kept after the revocation: their
 * refusals stay explainable for a month. Nothing depends on them being there: without the family
 * item, or with it revoked, no token of the family rotates.
 */
export const REVOKED_GRANT_SECONDS = 30 * 24 * 3600;

/** What a user has allowed an application (remembered consent). */
export interface Consent {
  userId: string;
  clientId: string;
  scopes: string[];
  grantedAt: string;
  /**
   * The grant generation: random, given when the consent is first recorded and kept while scopes are
   * added; a revocation deletes the consent, so a later consent has another. Every code, family and
   * refresh token records the generation it was issued under, and the code exchange and each rotation
   * are conditional on the consent still having it: what a revocation ended cannot be redeemed after
   * it. Absent only on a consent recorded before generations (see grantCondition in grant-repo.ts).
   */
  grantGeneration?: string;
}

/**
 * The consent a user's "allow" records: the scopes already granted and the requested ones, under
 * the generation of the consent read, or `freshGeneration` when there was none.
 */
export function allowedConsent(
  previous: Consent | undefined, grant: { userId: string; clientId: string; requested: string[]; grantedAt: string; freshGeneration: string },
): Consent {
  const { userId, clientId, requested, grantedAt, freshGeneration } = grant;
  return {
    userId,
    clientId,
    scopes: [...new Set([...(previous?.scopes ?? []), ...requested])],
    grantedAt,
    ...(previous ? (previous.grantGeneration === undefined ? {} : { grantGeneration: previous.grantGeneration }) : { grantGeneration: freshGeneration }),
  };
}

/** An authorization code, as stored (under the hash of the code). */
export interface AuthorizationCode {
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge?: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** Set once the code has been exchanged. */
  usedAt?: string;
  /** The refresh-token family the exchange created (revoked if the code is replayed). */
  familyId?: string;
  /** Hash of the family's first refresh token: a replay revokes the family and, if still current, ends it too. */
  refreshTokenHash?: string;
  /** The generation of the consent the code was issued under (see Consent); absent on a code from before generations. */
  grantGeneration?: string;
  /** Set by the loser of a race to exchange the code: from then on no exchange of it can win. */
  replayedAt?: string;
}

/** The chain of refresh tokens issued from one authorization code. Revoking it ends them all. */
export interface TokenFamily {
  familyId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  status: 'active' | 'revoked';
  createdAt: string;
  /** Hash of the family's current refresh token (kept by the repository), so a revocation can give it a TTL. */
  activeTokenHash?: string;
  /** Epoch seconds: set when the family is revoked (TTL). */
  expiresAt?: number;
  /** The consent's generation, from the code (see Consent). */
  grantGeneration?: string;
}

/** One refresh token, stored under its hash. */
export interface RefreshToken {
  tokenHash: string;
  familyId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  status: 'active' | 'rotated';
  /** Epoch milliseconds of the rotation. */
  rotatedAt?: number;
  successorHash?: string;
  /** The successor token, sealed with this token (see sealWith). */
  sealedSuccessor?: string;
  /** Epoch seconds: set when the token is rotated or its family revoked (TTL); an active token of an active family has none. */
  expiresAt?: number;
  /** The consent's generation, from the family (see Consent): a rotation is conditional on it. */
  grantGeneration?: string;
}
