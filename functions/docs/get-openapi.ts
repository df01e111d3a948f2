import { openApiDocument } from '#shared/api-docs/openapi';
import { bundledTable } from '#shared/declaration';
import { audience, issuer } from '#shared/runtime';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';

const body = openApiDocument(bundledTable(), audience(), issuer());

/** GET /openapi.json — the resource API's OpenAPI document, derived from the endpoint table compiled into this bundle. */
export const handler = publicHandler(async () => ok(body, { 'cache-control': 'public, max-age=300' }));
