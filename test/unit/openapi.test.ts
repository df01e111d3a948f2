import { describe, expect, it } from 'vitest';
import { openApiDocument } from '#shared/api-docs/openapi';
import { endpointTable, ROUTES } from '#functions/registry';
import { DEVICE_FIELDS } from '#shared/domain/device';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { USER_FIELDS } from '#shared/domain/user';
import { testEvent, changeToEvents } from '#shared/webhooks/events';
import { WEBHOOK_EVENT_TYPES } from '#shared/domain/webhook';

describe('OpenAPI document', () => {
  const doc = openApiDocument(endpointTable(), 'https://api.example', 'https://auth.example');
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

  it('has exactly the fields of docs/api.md#resources in its schemas, and the OAuth flow of the auth host', () => {
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.Device.properties).sort()).toEqual([...DEVICE_FIELDS].sort());
    expect(Object.keys(schemas.User.properties).sort()).toEqual([...USER_FIELDS].sort());
    expect(Object.keys(schemas.DeviceChanges.properties).sort()).toEqual(['active', 'name', 'place', 'sound']);
    const flow = doc.components.securitySchemes.oauth2.flows.authorizationCode;
    expect(flow.tokenUrl).toBe('https://auth.example/oauth/token');
    expect(Object.keys(flow.scopes).sort()).toEqual([...ALL_SCOPES].sort());
    expect(doc.servers).toEqual([{ url: 'https://api.example' }]);
  });

  describe('webhooks', () => {
    const webhooks = doc.webhooks as Record<string, { post: { requestBody: { content: { 'application/json': { schema: { required: string[]; properties: Record<string, { const?: string; required?: string[]; properties?: Record<string, unknown> }> } } } }; parameters: { name: string; in: string; required: boolean }[] } }>;
    const schemaOf = (type: string) => webhooks[type]!.post.requestBody.content['application/json'].schema;

    it('lists every event type of shared/webhooks/events.ts, and no other', () => {
      expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
      for (const type of WEBHOOK_EVENT_TYPES) expect(schemaOf(type).properties.type!.const).toBe(type);
    });

    it('names the three Standard Webhooks headers on every event', () => {
      for (const type of WEBHOOK_EVENT_TYPES) {
        expect(webhooks[type]!.post.parameters.filter((p) => p.in === 'header' && p.required).map((p) => p.name).sort())
          .toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
      }
    });

    it('documents the members of the payloads events.ts builds, and a sequence on device events', () => {
      const at = new Date('2030-01-02T03:04:05.000Z');
      const device = { pk: 'USER#u1', sk: 'DEVICE#d1', id: 'd1', name: 'Lamp', place: 'Hall', active: false, sound: true, connected: false, last_connection: '2030-01-01T00:00:00.000', seq: 4 };
      const built = [
        testEvent('client-1', at),
        ...changeToEvents({ eventId: 'e1', eventName: 'MODIFY', at, oldImage: device, newImage: { ...device, name: 'Lamp 2', connected: true, seq: 5 } })!.events,
        ...changeToEvents({ eventId: 'e2', eventName: 'INSERT', at, newImage: device })!.events,
        ...changeToEvents({ eventId: 'e3', eventName: 'REMOVE', at, oldImage: device })!.events,
        ...changeToEvents({ eventId: 'e4', eventName: 'REMOVE', at, oldImage: { pk: 'USER#u1', sk: 'CONSENT#client-1' } })!.events,
        ...changeToEvents({
          eventId: 'e5', eventName: 'MODIFY', at,
          oldImage: { pk: 'USER#u1', sk: 'CONSENT#client-1', scopes: ['read_device', 'read_user'] },
          newImage: { pk: 'USER#u1', sk: 'CONSENT#client-1', scopes: ['read_device'], onlyDevices: ['d1'] },
        })!.events,
      ];
      expect(new Set(built.map((e) => e.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES));
      for (const event of built) {
        const schema = schemaOf(event.type);
        expect(Object.keys(event).sort()).toEqual([...schema.required].sort());
        const data = schema.properties.data!;
        expect(Object.keys(event.data).sort(), event.type).toEqual([...data.required!].sort());
        if (event.type.startsWith('device.')) expect(data.required).toContain('sequence');
      }
    });
  });
});
