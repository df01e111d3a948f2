import { readClientCredentials } from '#shared/oauth/client-auth';
import { DEVICE_CODE_GRANT_TYPE } from '#shared/oauth/grants/device-code';
import { withClientCors } from '#shared/oauth/cors';
import type { TokenService } from '#shared/oauth/token-service';
import { InvalidGrantError } from '#shared/errors';
import { parseForm, requireParams } from '#shared/http/form';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { TOKEN_ENDPOINT_HEADERS } from '#shared/http/security-headers';

export interface TokenEndpointOptions {
  /**
   * Starts getting the signer of the moment (the keyring reads its signing-key schedule at most once a
   * minute), so that a read it needs runs alongside the grant's BatchGetItem instead of after it: one
   * round trip fewer in a cold start and once a minute. Its failure is left to the signature, which
   * asks again.
   */
  prefetchSigner?: () => Promise<unknown>;
}

/**
 * POST /oauth/token — authorization_code, refresh_token and device_code grants
 * (docs/api.md#token-request-authorization-code, docs/api.md#token-request-refresh,
 * docs/api.md#token-request-device-code, docs/api.md#token-errors), over the token service it is given: the function's own, or a test's
 * with a failing signer. Confidential clients authenticate with their secret, public ones with
 * client_id alone (client-auth.ts); a browser application's answers carry its CORS (cors.ts).
 */
export function tokenEndpoint(tokens: Pick<TokenService, 'exchangeCode' | 'refresh' | 'pollDeviceCode'>, options: TokenEndpointOptions = {}) {
  return publicHandler((event) => withClientCors(event, async (identified) => {
    const form = parseForm(event, { emptyAsOmitted: true });
    const { grant_type: grantType } = requireParams(form, ['grant_type']);
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token' && grantType !== DEVICE_CODE_GRANT_TYPE) {
      // docs/api.md#token-errors names invalid_grant for a grant_type other than the two.
      throw new InvalidGrantError(`Unsupported grant_type '${grantType.slice(0, 40)}'.`);
    }
    options.prefetchSigner?.().catch(() => undefined);
    // A public client names itself with client_id alone; a browser application's answer carries its CORS (cors.ts).
    const credentials = { ...readClientCredentials(event.headers.authorization, form, 'invalid_request'), identified };
    if (grantType === 'authorization_code') {
      const { code, redirect_uri: redirectUri } = requireParams(form, ['code', 'redirect_uri']);
      return ok(await tokens.exchangeCode(credentials, { code, redirectUri, codeVerifier: form.code_verifier }));
    }
    if (grantType === DEVICE_CODE_GRANT_TYPE) {
      const { device_code: deviceCode } = requireParams(form, ['device_code']);
      return ok(await tokens.pollDeviceCode(credentials, { deviceCode }));
    }
    const { refresh_token: refreshToken } = requireParams(form, ['refresh_token']);
    return ok(await tokens.refresh(credentials, { refreshToken, scope: form.scope }));
  }), TOKEN_ENDPOINT_HEADERS);
}
