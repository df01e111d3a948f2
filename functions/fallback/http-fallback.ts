import { bundledTable } from '#shared/declaration';
import { API_CORS, fallbackRouteKeys, knownPath, pathsOf, type ApiName } from '#shared/routes';
import { MethodNotAllowedError, NotFoundError } from '#shared/errors';
import { prefersHtml } from '#shared/http/accept';
import { errorPage } from '#shared/views/html';
import { publicHandler } from '#shared/http/http';

// Each fallback route key belongs to one API (`$default` on the API without CORS, `<method> <path>`
// on the one with CORS): a known path answers with the methods that API serves there, found by the
// route key, or for `$default` by matching the request's path (knownPath). The routes are the
// endpoint table's, compiled into this bundle (shared/declaration.ts).
const { routes } = bundledTable();
const PATHS = { resource: pathsOf('resource', routes), auth: pathsOf('auth', routes) } as const;
const FALLBACKS = new Map((Object.keys(API_CORS) as ApiName[]).flatMap((api) =>
  fallbackRouteKeys(api, routes).map((key) => [key, api] as const)));

/** The API a fallback request came to, and the methods served at its path (none: an unknown path). */
function fallbackOf(routeKey: string, requestPath: string): { api: ApiName | undefined; allowed: readonly string[] } {
  const api = FALLBACKS.get(routeKey);
  if (api === undefined) return { api, allowed: [] };
  const path = routeKey === '$default' ? knownPath(api, routes, requestPath) : routeKey.split(' ')[1];
  return { api, allowed: (path && PATHS[api].get(path)) || [] };
}

/**
 * Answers what no route of the table matches: a known path with another method gets 405 with
 * `Allow`; anything else (`$default`, `/{proxy+}`, `/` on the resource API) gets 404. The resource
 * API always answers JSON; the auth host, whose pages people open in a browser, answers the HTML
 * error page to a request that asks for HTML (`Accept: text/html`) and JSON to the others.
 */
export const handler = publicHandler(async (event) => {
  const fallback = fallbackOf(event.routeKey, event.rawPath);
  const { allowed } = fallback;
  const error = allowed.length > 0 ? new MethodNotAllowedError(allowed) : new NotFoundError('No resource at this path.');
  if (fallback.api === 'auth' && prefersHtml(event.headers?.accept)) {
    const result = errorPage(allowed.length > 0 ? error : new NotFoundError('There is no page at this address.'));
    return { ...result, headers: { ...result.headers, vary: 'accept' } };
  }
  if (fallback.api === 'auth') error.headers.vary = 'accept';
  throw error;
});
