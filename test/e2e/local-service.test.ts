import { describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { tokenFor, useTestService } from '../support/service';

describe('local service', () => {
  const service = useTestService();

  it('serves the demo user their devices through the gateway', async () => {
    const alice = DEMO_USERS[0];
    const token = await tokenFor(service, alice.user.id, ['read_device']);

    const response = await fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${token}` } });

    expect(response.status).toBe(200);
    const devices = (await response.json()) as { id: string }[];
    expect(devices.map((d) => d.id).sort()).toEqual(alice.devices.map((d) => d.id).sort());
  });
});

describe('OpenAPI document', () => {
  const service = useTestService();

  it('is served without a token at /openapi.json, naming this deployment\'s hosts', async () => {
    const response = await fetch(`${service.apiUrl}/openapi.json`);

    expect(response.status).toBe(200);
    const doc = (await response.json()) as { servers: { url: string }[]; components: { securitySchemes: { oauth2: { flows: { authorizationCode: { tokenUrl: string } } } } } };
    expect(doc.servers).toEqual([{ url: service.apiUrl }]);
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(`${service.authUrl}/oauth/token`);
  });
});
