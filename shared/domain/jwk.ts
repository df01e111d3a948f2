/**
 * A public signing key as the JWKS publishes it (RFC 7517): RSA, for RS256 signatures. The signers
 * (shared/keys/) make it, the signing-key schedule (shared/data/signing-key-repo.ts) keeps it.
 */
export interface PublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

/** Reduces an RSA public JWK to its JWKS entry. */
export function toPublicJwk(jwk: { n?: string; e?: string }, kid: string): PublicJwk {
  return { kty: 'RSA', n: String(jwk.n), e: String(jwk.e), kid, alg: 'RS256', use: 'sig' };
}
