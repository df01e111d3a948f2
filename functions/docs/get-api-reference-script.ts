import { rendererScript } from '#shared/api-docs/api-reference';
import { publicHandler } from '#shared/http/http';

const { body, version } = rendererScript();
const TYPE = 'text/javascript; charset=utf-8';
// The page asks for it as docs/reference.js?v=<digest of this body>, so a new renderer gets a new
// URL: that URL may be cached forever. Any other URL (a page cached before a deployment) briefly.
const IMMUTABLE = { 'content-type': TYPE, 'cache-control': 'public, max-age=31536000, immutable' };
const SHORT = { 'content-type': TYPE, 'cache-control': 'public, max-age=300' };

/** GET /docs/reference.js — the API reference's renderer (Redoc's standalone bundle), from this function's package. */
export const handler = publicHandler(async (event) => ({
  statusCode: 200,
  headers: event.queryStringParameters?.v === version ? IMMUTABLE : SHORT,
  body,
}));
