import { authorizationServerMetadata } from '#shared/oauth/metadata';
import { issuer } from '#shared/runtime';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const body = authorizationServerMetadata(issuer());

/** GET /.well-known/oauth-authorization-server and /.well-known/openid-configuration. */
export const handler = publicHandler(async () => ok(body, { 'cache-control': 'public, max-age=300' }));
