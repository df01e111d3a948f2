import { keyring } from '#shared/runtime';
import { JWKS_MAX_AGE_SECONDS } from '#shared/keys/schedule';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

/** GET /.well-known/jwks.json — the public half of every signing key that is not retired (shared/keys/schedule.ts). */
export const handler = publicHandler(async () =>
  ok({ keys: await keyring.publishedKeys() }, { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` }));
