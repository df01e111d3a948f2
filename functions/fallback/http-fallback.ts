import { bundledTable } from '#shared/endpoint';
import { API_CORS, fallbackRouteKeys, pathsOf, type ApiName } from '#shared/routes';
import { MethodNotAllowedError, NotFoundError } from '#shared/errors';
import { prefersHtml } from '#shared/http/accept';
import { errorPage } from '#shared/views/html';
import { publicHandler } from '#shared/http/http';

// Each fallback route key belongs to one API (`ANY <path>` and `$default` on the API without CORS,
// `<method> <path>` on the one with CORS): a known path answers with the methods that API serves
// there. The routes are the endpoint table's, compiled into this bundle (shared/endpoint.ts).
const { routes } = bundledTable();
const FALLBACKS = new Map((Object.keys(API_CORS) as ApiName[]).flatMap((api) =>
  fallbackRouteKeys(api, routes).map((key) => [key, { api, allowed: pathsOf(api, routes).get(key.split(' ')[1] ?? '') ?? [] }] as const)));

/**
 * Answers what no route of the table matches: a known path with another method gets 405 with
 * `Allow`; anything else (`$default`, `/{proxy+}`, `/` on the resource API) gets 404. The resource
 * API always answers JSON; the auth host, whose pages people open in a browser, answers the HTML
 * error page to a request that asks for HTML (`Accept: text/html`) and JSON to the others.
 */
export const handler = publicHandler(async (event) => {
  const fallback = FALLBACKS.get(event.routeKey);
  const allowed = fallback?.allowed ?? [];
  const error = allowed.length > 0 ? new MethodNotAllowedError(allowed) : new NotFoundError('No resource at this path.');
  if (fallback?.api === 'auth' && prefersHtml(event.headers?.accept)) {
    const result = errorPage(allowed.length > 0 ? error : new NotFoundError('There is no page at this address.'));
    return { ...result, headers: { ...result.headers, vary: 'accept' } };
  }
  if (fallback?.api === 'auth') error.headers.vary = 'accept';
  throw error;
});
