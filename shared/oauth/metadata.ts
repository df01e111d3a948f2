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
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    // RFC 8628 §4: devices without a browser (applications that enable the device flow in the console).
    device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    // `none`: a public client (a native or browser application) names itself with client_id alone (shared/oauth/client-auth.ts).
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    // OpenID discovery members the document must carry to be read as one; no ID tokens are issued.
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
  };
}
