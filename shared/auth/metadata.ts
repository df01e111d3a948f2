import { ALL_SCOPES } from '#shared/domain/scopes';

/** Path of the JWKS on the authorization server. */
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * Authorization server metadata (RFC 8414). The same document is served as OpenID discovery,
 * where API Gateway's JWT authorizer finds `jwks_uri`.
 */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
  };
}
