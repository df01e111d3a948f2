// Files that functions read at run time besides their code: a function lists the ones it reads
// (`assets` of its declaration, functions/<area>/<name>.route.ts), and the stack copies each from
// node_modules into its package, at the same path. Here, below both the declarations and the code
// that reads them.

/**
 * Redoc's standalone bundle: the script that renders the API reference page (`GET /docs`,
 * shared/docs/api-reference.ts) in the browser. Redoc is an npm dependency, pinned to an exact version.
 */
export const RENDERER_FILE = 'redoc/bundles/redoc.standalone.js';
