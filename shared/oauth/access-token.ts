import { randomUUID } from 'node:crypto';
import { signJwt, type TokenSigner } from '#shared/keys/signer';
import { epochSeconds } from '#shared/domain/time';
import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/domain/grant';

export interface AccessTokenRequest {
  issuer: string;
  audience: string;
  userId: string;
  clientId: string;
  scopes: readonly string[];
  now?: Date;
  ttlSeconds?: number;
}

/** Issues an RFC 9068 access token (`typ: at+jwt`), RS256 with `kid`. */
export function issueAccessToken(signer: TokenSigner, request: AccessTokenRequest): Promise<string> {
  const iat = epochSeconds(request.now ?? new Date());
  return signJwt(signer, { typ: 'at+jwt' }, {
    iss: request.issuer,
    sub: request.userId,
    aud: request.audience,
    client_id: request.clientId,
    scope: request.scopes.join(' '),
    jti: randomUUID(),
    iat,
    exp: iat + (request.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS),
  });
}
