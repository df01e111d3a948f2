import { apiReferenceCsp, apiReferencePage, rendererScript } from '#shared/api-docs/api-reference';
import { publicHandler } from '#shared/http/http';

const script = rendererScript();
const headers = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'public, max-age=300',
  'content-security-policy': apiReferenceCsp(script),
};
const body = apiReferencePage(script);

/** GET /docs — the API reference: Redoc renders GET /openapi.json in the browser (shared/api-docs/api-reference.ts). */
export const handler = publicHandler(async () => ({ statusCode: 200, headers, body }));
