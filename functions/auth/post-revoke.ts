import { revokeToken } from '#shared/runtime';
import { readClientCredentials } from '#shared/oauth/client-auth';
import { parseForm, requireParams } from '#shared/http/form';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { TOKEN_ENDPOINT_HEADERS } from '#shared/http/security-headers';
import { withClientCors } from '#shared/oauth/cors';

/**
 * POST /oauth/revoke (RFC 7009). A refresh token revokes its whole grant. Access tokens are
 * self-contained and expire within the hour, so they are accepted with 200 like unknown tokens.
 * A public client names itself with client_id alone; a browser application's answer carries its
 * CORS (shared/oauth/cors.ts).
 */
export const handler = publicHandler((event) => withClientCors(event, async (identified) => {
  const form = parseForm(event, { emptyAsOmitted: true });
  const { token } = requireParams(form, ['token']);
  await revokeToken({ ...readClientCredentials(event.headers.authorization, form, 'invalid_client'), identified }, token);
  return ok({});
}), TOKEN_ENDPOINT_HEADERS);
