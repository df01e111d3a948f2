import type { ClientCredentials } from '#shared/oauth/client-auth';
import { createGrantContext, type TokenServiceDeps } from '#shared/oauth/grant-context';
import { EXCHANGE_CODE_USES, exchangeCode, type CodeExchange } from '#shared/oauth/grants/authorization-code';
import { REFRESH_USES, refreshTokens, type RefreshRequest } from '#shared/oauth/grants/refresh-token';
import { AUTHORIZE_DEVICE_USES, authorizeDevice, POLL_DEVICE_CODE_USES, pollDeviceCode } from '#shared/oauth/grants/device-code';
import type { UsesDeclaration } from '#shared/data/uses';

/** The repository operations of the token service: those of its grants (the token endpoint's grants: functions/needs.ts). */
export const TOKEN_SERVICE_USES = [EXCHANGE_CODE_USES, REFRESH_USES, AUTHORIZE_DEVICE_USES, POLL_DEVICE_CODE_USES] as const satisfies UsesDeclaration;

export type TokenService = ReturnType<typeof createTokenService>;

/**
 * The token endpoint's grants (one file each in shared/oauth/grants/: authorization code, refresh
 * token, device code with its device authorization), over one clock, signer and
 * client cache (grant-context.ts).
 */
export function createTokenService(deps: TokenServiceDeps) {
  const ctx = createGrantContext(deps);
  return {
    exchangeCode: (credentials: ClientCredentials, form: CodeExchange) => exchangeCode(ctx, credentials, form),
    refresh: (credentials: ClientCredentials, form: RefreshRequest) => refreshTokens(ctx, credentials, form),
    authorizeDevice: (credentials: ClientCredentials, form: { scope?: string }) => authorizeDevice(ctx, credentials, form),
    pollDeviceCode: (credentials: ClientCredentials, form: { deviceCode: string }) => pollDeviceCode(ctx, credentials, form),
  };
}
