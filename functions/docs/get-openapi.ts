import { openApiDocument } from '#shared/docs/openapi';
import { ENV, requireEnv } from '#shared/config';
import { bundledTable } from '#shared/endpoint';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const body = openApiDocument(bundledTable(), requireEnv(ENV.audience), requireEnv(ENV.issuer));

/** GET /openapi.json — the resource API's OpenAPI document, derived from the endpoint table compiled into this bundle. */
export const handler = publicHandler(async () => ok(body, { 'cache-control': 'public, max-age=300' }));
