import { apiHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { devices } from '#shared/runtime';

/** GET /devices — the devices the authorized user owns (SPEC.md §4.2). */
export const handler = apiHandler(async ({ claims }) => ok(await devices.listDevicesByOwner(claims.sub)));
