import type { ClientCredentials } from '#shared/oauth/client-auth';
import { createGrantContext, type TokenServiceDeps } from '#shared/oauth/grant-context';
import { exchangeCode, type CodeExchange } from '#shared/oauth/grants/authorization-code';
import { refreshTokens, type RefreshRequest } from '#shared/oauth/grants/refresh-token';
import { revokeToken } from '#shared/oauth/revocation';

export type TokenService = ReturnType<typeof createTokenService>;

/**
 * The token endpoint's two grants (one file each in shared/oauth/grants/) and revocation, over one
 * clock, signer and client cache (grant-context.ts).
 */
export function createTokenService(deps: TokenServiceDeps) {
  const ctx = createGrantContext(deps);
  return {
    exchangeCode: (credentials: ClientCredentials, form: CodeExchange) => exchangeCode(ctx, credentials, form),
    refresh: (credentials: ClientCredentials, form: RefreshRequest) => refreshTokens(ctx, credentials, form),
    revoke: (credentials: ClientCredentials, token: string) => revokeToken(deps.grants, credentials, token, ctx.now()),
  };
}
