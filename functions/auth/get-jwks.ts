import { doc, table } from '#shared/auth/runtime';
import { keyringFromEnv } from '#shared/auth/signer-from-env';
import { JWKS_MAX_AGE_SECONDS } from '#shared/auth/signing-keys';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const keyring = keyringFromEnv({ doc, table });

/** GET /.well-known/jwks.json — the public half of every signing key that is not retired (signing-keys.ts). */
export const handler = publicHandler(async () =>
  ok({ keys: await keyring.publishedKeys() }, { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` }));
