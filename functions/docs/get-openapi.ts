import { openApiDocument } from '#shared/docs/openapi';
import { audience, issuer } from '#shared/runtime';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const body = openApiDocument(audience(), issuer());

/** GET /openapi.json — the resource API's OpenAPI document, derived from the route table. */
export const handler = publicHandler(async () => ok(body, { 'cache-control': 'public, max-age=300' }));
