import { describe, expect, it } from 'vitest';
import { openApiDocument } from '#shared/docs/openapi';
import { ROUTES } from '#shared/routes';
import { DEVICE_FIELDS } from '#shared/domain/device';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { USER_FIELDS } from '#shared/domain/user';

describe('OpenAPI document', () => {
  const doc = openApiDocument('https://api.example', 'https://auth.example');
  const operations = doc.paths as Record<string, Record<string, { security: { oauth2: string[] }[]; operationId: string }>>;

  it('describes every scoped resource route with its scope, bare and under /api', () => {
    const scoped = ROUTES.filter((r) => r.api === 'resource' && r.scopes);
    expect(scoped.length).toBeGreaterThanOrEqual(8);
    for (const route of scoped) {
      const op = operations[route.path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op!.security).toEqual([{ oauth2: [...route.scopes!] }]);
    }
    const ids = Object.values(operations).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has exactly the fields of SPEC.md in its schemas, and the OAuth flow of the auth host', () => {
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.Device.properties).sort()).toEqual([...DEVICE_FIELDS].sort());
    expect(Object.keys(schemas.User.properties).sort()).toEqual([...USER_FIELDS].sort());
    expect(Object.keys(schemas.DeviceChanges.properties).sort()).toEqual(['active', 'name', 'place', 'sound']);
    const flow = doc.components.securitySchemes.oauth2.flows.authorizationCode;
    expect(flow.tokenUrl).toBe('https://auth.example/oauth/token');
    expect(Object.keys(flow.scopes).sort()).toEqual([...ALL_SCOPES].sort());
    expect(doc.servers).toEqual([{ url: 'https://api.example' }]);
  });
});
