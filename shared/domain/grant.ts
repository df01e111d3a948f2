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
}
