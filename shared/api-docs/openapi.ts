import type { EndpointTable } from '#shared/declaration';
import { ROUTE_KEY_METHODS, type Route } from '#shared/routes';
import { DEVICE_FIELDS, TEXT_MAX_LENGTH } from '#shared/domain/device';
import { ALL_SCOPES, SCOPES } from '#shared/domain/scopes';
import { USER_FIELDS } from '#shared/domain/user';
import { webhooksSection } from '#shared/api-docs/webhooks-openapi';

// The resource API's OpenAPI 3.1 document, derived from the endpoint table like the stack and the
// local gateway: each scoped resource route with the operation its function declares beside its
// handler (`openApi` of functions/<area>/<name>.route.ts). Served at {base_url}/openapi.json.

const TIMESTAMP = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}$', description: 'UTC, no offset' };

const DEVICE_PROPERTIES: Record<(typeof DEVICE_FIELDS)[number], object> = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string', minLength: 1, maxLength: TEXT_MAX_LENGTH },
  place: { type: 'string', minLength: 1, maxLength: TEXT_MAX_LENGTH },
  version: { type: 'string', description: 'The device\'s own version (dotted number text)' },
  last_connection: TIMESTAMP,
  active: { type: 'boolean', description: 'true = user away, false = user present' },
  connected: { type: 'boolean', description: 'Connection state of the device to the cloud' },
  reference: { type: 'string', pattern: '^[0-9a-fA-F]+$', description: 'Hardware reference' },
  latitude: { type: 'number' },
  longitude: { type: 'number' },
  sound: { type: 'boolean' },
};

const USER_PROPERTIES: Record<(typeof USER_FIELDS)[number], object> = {
  id: { type: 'string', format: 'uuid' },
  firstname: { type: 'string' },
  lastname: { type: 'string' },
  avatar_url: { type: 'string', description: 'Path of the avatar image (/avatars/<id>.png) on this API; resolve it against the server URL; no token needed' },
  gender: { type: 'integer', enum: [0, 1, 2], description: '0 = undefined, 1 = male, 2 = female' },
  email: { type: 'string', format: 'email' },
  email_confirmed: { type: 'boolean' },
  creation_date: TIMESTAMP,
  update_date: TIMESTAMP,
};

/** A reference to a schema of the document's components (User, Device, DeviceChanges, Error). */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A JSON body of `schema`, as a response or request body takes it. */
export const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(ref('Error')) });
const gatewayError = (description: string) => ({
  description: `${description} (answered by the gateway's JWT authorizer, with WWW-Authenticate)`,
  ...json({ type: 'object', properties: { message: { type: 'string' } } }),
});


function operation(route: Route, operations: EndpointTable['operations']) {
  const op = operations[route.fn];
  if (!op) throw new Error(`No OpenAPI description for ${route.fn}`);
  const deviceParam = route.path.includes('{device_id}')
    ? [{ name: 'device_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }]
    : [];
  return {
    operationId: `${route.fn}${route.path.startsWith('/api/') ? '-api' : ''}`,
    summary: op.summary,
    security: [{ oauth2: [...(route.scopes ?? [])] }],
    ...(deviceParam.length ? { parameters: deviceParam } : {}),
    ...(op.body ? { requestBody: op.body } : {}),
    responses: {
      ...op.success,
      ...(op.body ? { 400: error('invalid_request: the body or a member is invalid (the description names it); nothing written'), 413: error('Body over 16 KiB'), 415: error('Content-Type is not application/json') } : {}),
      401: gatewayError('Missing, malformed, expired or badly signed token'),
      403: gatewayError('The token lacks the scope'),
      ...(deviceParam.length ? { 404: error('not_found: no such device, or not yours') } : {}),
      503: error('temporarily_unavailable: retry after Retry-After seconds'),
    },
  };
}

/**
 * The document's order of operations, whatever order the table lists them in: by the scope they
 * need, in SCOPES' order (the profile, then the devices, reads before writes), then by path, each
 * bare path before its /api alias, then by method (ROUTE_KEY_METHODS).
 */
function documentOrder(a: Route, b: Route): number {
  const scope = (route: Route) => ALL_SCOPES.indexOf(route.scopes?.[0] ?? ALL_SCOPES[0]!);
  const [x, y] = [a, b].map((route) => route.path.replace(/^\/api(?=\/)/, '')) as [string, string];
  return scope(a) - scope(b) || (x < y ? -1 : x > y ? 1 : 0) || a.path.length - b.path.length
    || ROUTE_KEY_METHODS.indexOf(a.method) - ROUTE_KEY_METHODS.indexOf(b.method);
}

/** The OpenAPI document of `table`'s resource routes for a deployment's two hosts. */
export function openApiDocument(table: EndpointTable, apiUrl: string, authUrl: string) {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of table.routes.filter((r) => r.api === 'resource' && r.scopes).toSorted(documentOrder)) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, table.operations);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Device and User Service',
      version: '1.0.0',
      description: 'Read the authorized user\'s profile; read and control the devices they own. Errors use {"error", "error_description"}. '
        + 'Changes are pushed to an application\'s webhook URL (registered in the developer console) as signed Standard Webhooks events: see `webhooks`.',
    },
    servers: [{ url: apiUrl }],
    paths,
    webhooks: webhooksSection(),
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: `${authUrl}/oauth/authorize`,
              tokenUrl: `${authUrl}/oauth/token`,
              refreshUrl: `${authUrl}/oauth/token`,
              scopes: SCOPES,
            },
          },
        },
      },
      schemas: {
        User: { type: 'object', required: [...USER_FIELDS], properties: USER_PROPERTIES, additionalProperties: false },
        Device: { type: 'object', required: [...DEVICE_FIELDS], properties: DEVICE_PROPERTIES, additionalProperties: false },
        DeviceChanges: {
          type: 'object',
          properties: { name: DEVICE_PROPERTIES.name, place: DEVICE_PROPERTIES.place, active: DEVICE_PROPERTIES.active, sound: DEVICE_PROPERTIES.sound },
          additionalProperties: false,
          description: 'Every member optional; only the members present change; {} is a no-op.',
        },
        Error: {
          type: 'object',
          required: ['error', 'error_description'],
          properties: { error: { type: 'string' }, error_description: { type: 'string' } },
        },
      },
    },
  };
}
