import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { RENDERER_FILE } from '#shared/assets';

// The API reference page (`GET /docs`): Redoc's standalone bundle renders the OpenAPI document of
// `GET /openapi.json` in the browser. Redoc is an npm dependency, pinned to an exact version; no
// CDN is involved. Its script file (RENDERER_FILE, shared/assets.ts) is read from node_modules:
// locally the repository's, in Lambda the copy the stack puts into the function's package at the
// same path (FunctionDef.assets).

/** The script path, relative to the page (so a stage or path prefix in front of the API still works). */
export const RENDERER_PATH = 'docs/reference.js';

/**
 * Redoc's sidebar footer ("API docs by Redocly", a link) adds Redocly's logo from their CDN. That
 * would be the page's only request to another host: we serve the script with the logo's address
 * replaced by an empty inline image; the attribution link and its text stay.
 */
const THIRD_PARTY_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>')}`;

export interface RendererScript {
  body: string;
  /** SHA-384 of the body, base64: its Subresource Integrity value and CSP hash. */
  sha384: string;
  /** A short hex digest, for the script's URL: a new renderer gets a new URL, so it may be cached forever. */
  version: string;
}

let cached: RendererScript | undefined;

/** The renderer script as served, read once per process. */
export function rendererScript(): RendererScript {
  if (cached) return cached;
  const original = readFileSync(createRequire(import.meta.url).resolve(RENDERER_FILE), 'utf8');
  if (!original.includes(THIRD_PARTY_LOGO)) {
    // A new Redoc version changed its footer: check that the page still makes no third-party request.
    throw new Error(`${RENDERER_FILE} no longer contains ${THIRD_PARTY_LOGO}`);
  }
  const body = original.replaceAll(THIRD_PARTY_LOGO, INLINE_LOGO);
  const digest = createHash('sha384').update(body).digest();
  cached = { body, sha384: digest.toString('base64'), version: digest.subarray(0, 8).toString('hex') };
  return cached;
}

/**
 * The page's Content-Security-Policy: only what Redoc needs.
 * - script-src: the one renderer script, by its hash (it carries the matching `integrity`); no
 *   inline script, no eval.
 * - style-src 'unsafe-inline': Redoc styles itself with styled-components, which inserts <style>
 *   elements at run time; Redoc's build offers no way to give them a nonce. No stylesheet is
 *   loaded from anywhere, and scripts stay locked down, so injected markup cannot run code.
 * - connect-src 'self': the OpenAPI document, fetched from this host.
 * - img-src data:: the inline logo above.
 * - no worker-src: search is turned off (Redoc runs it in a blob: worker), as four operations
 *   need no search box.
 */
export function apiReferenceCsp(script: RendererScript): string {
  return [
    "default-src 'none'",
    `script-src 'sha384-${script.sha384}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The HTML of `GET /docs`: Redoc's element pointing at the OpenAPI document, and its script. */
export function apiReferencePage(script: RendererScript): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Device and User Service</title><link rel="icon" href="data:,"></head>
<body><noscript><p>The API reference needs JavaScript. The OpenAPI document itself is at <a href="openapi.json">openapi.json</a>.</p></noscript>
<redoc spec-url="openapi.json" disable-search="true"></redoc>
<script src="${RENDERER_PATH}?v=${script.version}" integrity="sha384-${script.sha384}"></script>
</body></html>
`;
}
