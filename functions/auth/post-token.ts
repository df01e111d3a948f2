import { tokenEndpoint } from '#shared/oauth/token-endpoint';
import { prefetchSigner, tokens } from '#shared/runtime';

/**
 * POST /oauth/token — authorization_code and refresh_token grants
 * (docs/api.md#token-request-authorization-code, docs/api.md#token-request-refresh,
 * docs/api.md#token-errors).
 */
export const handler = tokenEndpoint(tokens, { prefetchSigner });
