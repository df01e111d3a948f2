import { apiHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { devices } from '#shared/runtime';

/** GET /devices — the devices the authorized user owns and chose to share with the application (docs/api.md#get-devices). */
export const handler = apiHandler(async ({ claims }) => ok(await devices.listDevicesSeenBy(claims.sub, claims.clientId)));
