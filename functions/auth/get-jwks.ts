import { keyringFromEnv } from '#shared/keys/signer-from-env';
import { JWKS_MAX_AGE_SECONDS } from '#shared/keys/schedule';
import { ENV, optionalEnv, requireEnv } from '#shared/config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

// Its own client rather than shared/auth/runtime.ts's, so the JWKS bundles no repository but the key schedule's.
const keyring = keyringFromEnv({ doc: createDocumentClient({ endpoint: optionalEnv(ENV.dynamodbEndpoint) }), table: requireEnv(ENV.tableName) });

/** GET /.well-known/jwks.json — the public half of every signing key that is not retired (shared/keys/schedule.ts). */
export const handler = publicHandler(async () =>
  ok({ keys: await keyring.publishedKeys() }, { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` }));
