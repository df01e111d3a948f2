import { API_CORS, fallbackRouteKeys, pathsOf, type ApiName } from '#shared/routes';
import { MethodNotAllowedError, NotFoundError } from '#shared/errors';
import { publicHandler } from '#shared/http/http';

// Each fallback route key belongs to one API (`ANY <path>` on an API without CORS, `<method> <path>`
// on the one with CORS): a known path answers with the methods that API serves there.
const ALLOWED = new Map((Object.keys(API_CORS) as ApiName[]).flatMap((api) =>
  fallbackRouteKeys(api).map((key) => [key, pathsOf(api).get(key.split(' ')[1] ?? '') ?? []] as const)));

/**
 * Answers what no route of the table matches: a known path with another method gets 405 with
 * `Allow`; anything else (`$default`, `/{proxy+}`, `/` on the resource API) gets a JSON 404.
 */
export const handler = publicHandler(async (event) => {
  const allowed = ALLOWED.get(event.routeKey) ?? [];
  if (allowed.length > 0) throw new MethodNotAllowedError(allowed);
  throw new NotFoundError('No resource at this path.');
});
