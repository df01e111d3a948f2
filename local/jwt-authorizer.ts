import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { AUTHORIZER_JWKS_CACHE_SECONDS } from '#shared/keys/schedule';

/**
 * A stand-in for API Gateway's HTTP API JWT authorizer, with the checks and answers AWS
 * documents: the token (with or without a `Bearer ` prefix) must be an RSA-signed JWT whose `kid`
 * is in the issuer's JWKS (found through its OpenID discovery document), with the configured
 * `iss`, an `aud` (or, only when `aud` is absent, `client_id`) among the audiences, `exp` in the
 * future, `nbf` and `iat` in the past, and one of the route's scopes in `scope` (or `scp`).
 * Failures are 401 `{"message":"Unauthorized"}` or 403 `{"message":"Forbidden"}` with a
 * `www-authenticate` header in API Gateway's format. Like API Gateway, it caches the JWKS for up to an
 * hour and fetches it again for a token whose `kid` it has not seen (at most every 30 s); both on
 * this process's clock, so a test can move time past the cache.
 */
export interface AuthorizerConfig {
  issuer: string;
  audience: string[];
}

export type AuthorizerResult =
  | { ok: true; claims: Record<string, string>; scopes: string[] }
  | { ok: false; status: 401 | 403; headers: Record<string, string>; body: string };

export function createJwtAuthorizer(config: AuthorizerConfig) {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const keySet = async () => {
    if (!jwks) {
      const response = await fetch(`${config.issuer}/.well-known/openid-configuration`);
      if (!response.ok) throw new Error(`OpenID discovery answered ${response.status}`);
      const { jwks_uri: jwksUri } = (await response.json()) as { jwks_uri: string };
      jwks = createRemoteJWKSet(new URL(jwksUri), { cacheMaxAge: AUTHORIZER_JWKS_CACHE_SECONDS * 1000, cooldownDuration: 30_000 });
    }
    return jwks;
  };

  return async function authorize(authorization: string | undefined, routeScopes: readonly string[]): Promise<AuthorizerResult> {
    if (!authorization) return unauthorized('', 'no token in the authorization header');
    const token = authorization.replace(/^bearer\s+/i, '').trim();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await keySet(), {
        issuer: config.issuer,
        algorithms: ['RS256', 'RS384', 'RS512'],
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return unauthorized(routeScopes.join(' '), describe(error));
    }
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.iat === 'number' && payload.iat > now) {
      return unauthorized(routeScopes.join(' '), 'the token was issued in the future');
    }
    const audiences = payload.aud === undefined
      ? [payload.client_id]
      : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!audiences.some((aud) => typeof aud === 'string' && config.audience.includes(aud))) {
      return unauthorized(routeScopes.join(' '), 'the token does not have a valid audience');
    }
    const raw = payload.scope ?? payload.scp;
    const tokenScopes = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(' ').filter(Boolean) : [];
    if (routeScopes.length > 0 && !routeScopes.some((scope) => tokenScopes.includes(scope))) {
      return {
        ok: false,
        status: 403,
        headers: { 'www-authenticate': `Bearer scope="${routeScopes.join(' ')}" error="insufficient_scope" error_description="expected scopes: [${routeScopes.join(' ')}]"` },
        body: JSON.stringify({ message: 'Forbidden' }),
      };
    }
    return { ok: true, claims: stringifyClaims(payload), scopes: tokenScopes };
  };
}

function unauthorized(scope: string, description: string): AuthorizerResult {
  return {
    ok: false,
    status: 401,
    headers: { 'www-authenticate': `Bearer scope="${scope}" error="invalid_token" error_description="${description}"` },
    body: JSON.stringify({ message: 'Unauthorized' }),
  };
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'the token does not have a valid issuer';
    if (error.claim === 'nbf') return 'the token is not valid yet';
    return `the token has an invalid ${error.claim} claim`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'the token was signed by an unknown key';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'the token signing method is not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is invalid';
  return 'the token is malformed';
}

// Payload 2.0 events carry claims as strings, as API Gateway passes them.
function stringifyClaims(payload: JWTPayload): Record<string, string> {
  return Object.fromEntries(Object.entries(payload).map(([key, value]) => [
    key,
    typeof value === 'string' ? value : Array.isArray(value) ? `[${value.join(' ')}]` : typeof value === 'object' ? JSON.stringify(value) : String(value),
  ]));
}
