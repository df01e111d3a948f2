import { NotFoundError } from '#shared/errors';
import { apiHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { users } from '#shared/runtime';

/** GET /user — the authorized user's profile (docs/api.md#get-user). */
export const handler = apiHandler(async ({ claims }) => {
  const user = await users.getUserById(claims.sub);
  if (!user) throw new NotFoundError('The user of this token no longer exists.');
  return ok(user);
});
