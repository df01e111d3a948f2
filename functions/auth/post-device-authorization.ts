import { readClientCredentials } from '#shared/oauth/client-auth';
import { tokens } from '#shared/runtime';
import { parseForm } from '#shared/http/form';
import { publicHandler } from '#shared/http/http';
import { ok } from '#shared/http/responses';
import { TOKEN_ENDPOINT_HEADERS } from '#shared/http/security-headers';

/**
 * POST /oauth/device_authorization (docs/api.md#device-authorization; RFC 8628 §3.1–3.2): a device
 * without a browser asks for a device code and a user code, authenticating as at the token endpoint
 * (a public client by client_id alone). Only an application that uses the device flow (the developer
 * console's setting) gets them.
 */
export const handler = publicHandler(async (event) => {
  const form = parseForm(event, { emptyAsOmitted: true });
  const credentials = readClientCredentials(event.headers.authorization, form, 'invalid_request');
  return ok(await tokens.authorizeDevice(credentials, { scope: form.scope }));
}, TOKEN_ENDPOINT_HEADERS);
