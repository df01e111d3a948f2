// Files that functions read at run time besides their code: a function lists the ones it reads
// (`assets` of its declaration, functions/<area>/<name>.route.ts), and the stack copies each from
// node_modules into its package, at the same path. Here, below both the declarations and the code
// that reads them.

/**
 * Redoc's standalone bundle: the script that renders the API reference page (`GET /docs`,
 * shared/api-docs/api-reference.ts) in the browser. Redoc is an npm dependency, pinned to an exact version.
 */
export const RENDERER_FILE = 'redoc/bundles/redoc.standalone.js';

/**
 * @simplewebauthn/browser's standalone bundle (a UMD script defining `SimpleWebAuthnBrowser`): the
 * passkey ceremonies in the browser, served with our page code at `GET /assets/passkeys.js`
 * (shared/pages/passkey-script.ts). The package's exports map hides the file from `require.resolve`,
 * so it is read by its path under node_modules.
 */
export const WEBAUTHN_BROWSER_FILE = '@simplewebauthn/browser/dist/bundle/index.umd.min.js';
