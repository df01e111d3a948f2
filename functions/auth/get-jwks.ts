import { signerFromEnv } from '#shared/auth/signer-from-env';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const signer = signerFromEnv();

/** GET /.well-known/jwks.json — the public half of the token signing key. */
export const handler = publicHandler(async () =>
  ok({ keys: [await (await signer).publicJwk()] }, { 'cache-control': 'public, max-age=300' }));
