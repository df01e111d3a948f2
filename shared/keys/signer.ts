import type { PublicJwk } from '#shared/domain/jwk';
import { DependencyUnavailableError } from '#shared/errors';

/**
 * Signs access tokens with RS256. Two implementations: AWS KMS (the private key never leaves
 * KMS) and a local key file. The public half is published in the JWKS under `kid`.
 */
export interface TokenSigner {
  readonly kid: string;
  /** RSASSA-PKCS1-v1_5 with SHA-256 over `data`. */
  sign(data: Uint8Array): Promise<Uint8Array>;
  /** The public key as a JWK with `kid`, `alg` and `use`. */
  publicJwk(): Promise<PublicJwk>;
}

/**
 * The signing service could not sign right now (throttled, briefly unavailable, unreachable): the
 * request may be retried as is. Thrown by a signer; the HTTP layer answers 503 with Retry-After.
 * A signer's other errors (a misconfigured key or permission) are bugs and stay a 500.
 */
export class SigningUnavailableError extends DependencyUnavailableError {
  constructor(cause: unknown) {
    super('The token signing service is temporarily unavailable.', { cause });
    this.name = 'SigningUnavailableError';
  }

  override get dependency(): string {
    return 'Signing';
  }
}

/** Assembles a compact JWS around the signer: header and payload are ours, the signature is the signer's. */
export async function signJwt(
  signer: TokenSigner,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): Promise<string> {
  const encode = (part: Record<string, unknown>) => Buffer.from(JSON.stringify(part)).toString('base64url');
  const signingInput = `${encode({ ...header, alg: 'RS256', kid: signer.kid })}.${encode(payload)}`;
  const signature = await signer.sign(Buffer.from(signingInput));
  return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
}
