import { apiHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { devices } from '#shared/runtime';

/** GET /devices — the devices the authorized user owns (docs/api.md#get-devices). */
export const handler = apiHandler(async ({ claims }) => ok(await devices.listDevicesByOwner(claims.sub)));
