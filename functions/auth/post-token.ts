import { tokenEndpoint } from '#shared/auth/token-endpoint';
import { prefetchSigner, tokens } from '#shared/auth/token-runtime';

/** POST /oauth/token — authorization_code and refresh_token grants (SPEC.md §5.4, §5.5, §7). */
export const handler = tokenEndpoint(tokens, { prefetchSigner });
