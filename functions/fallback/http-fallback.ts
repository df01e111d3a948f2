import { ROUTES } from '#infra/routes';
import { MethodNotAllowedError, NotFoundError } from '#shared/errors';
import { publicHandler } from '#shared/http/http';

/**
 * Answers what no route matches: a known path with another method (route `ANY <path>`) gets 405
 * with `Allow`; anything else (route `$default`) gets a JSON 404.
 */
export const handler = publicHandler(async (event) => {
  const [, path] = event.routeKey.split(' ');
  const allowed = ROUTES.filter((route) => route.path === path).map((route) => route.method);
  if (allowed.length > 0) throw new MethodNotAllowedError(allowed);
  throw new NotFoundError('No resource at this path.');
});
