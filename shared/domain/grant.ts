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
}

/** The chain of refresh tokens issued from one authorization code. Revoking it ends them all. */
export interface TokenFamily {
  familyId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  status: 'active' | 'revoked';
  createdAt: string;
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
}
