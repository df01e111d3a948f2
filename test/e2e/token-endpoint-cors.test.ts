import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { useTestService } from '../support/service';

// CORS of the token and revocation endpoints over HTTP, for a browser application (a public client
// registered in the console with the origin of its page among its redirect URIs): the preflight,
// the answers (tokens and refusals) for that origin, once the client id names a known client, and
// none for another origin, a server application or an unknown client. The rule on its own,
// test/unit/cors.test.ts; a real page of another origin in Chromium, test/e2e/public-clients.test.ts.

const service = useTestService();
let developer: Browser;

beforeAll(async () => {
  const account = await createAccount(service);
  developer = new Browser(service.authUrl);
  expect((await signIn(developer, account)).status).toBe(303);
});

/** Registers a browser application (a public client) in the console; its client id. */
async function registerPublicApp(redirectUris: string[]): Promise<string> {
  const page = await developer.get('/developer');
  const reply = await developer.postForm('/developer/apps', {
    ...formFields(page.text, '/developer/apps'), name: 'Browser test app', description: '', website: 'https://spa.example',
    client_type: 'public', redirect_uris: redirectUris.join('\n'),
  });
  expect(reply.status, textOf(reply.text).slice(0, 300)).toBe(303);
  return decodeURIComponent(/^\/developer\/apps\/([^/?]+)$/.exec(reply.location ?? '')![1]!);
}

const tokenRequest = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields),
  });

describe('CORS of the token and revocation endpoints, over HTTP', () => {
  const ORIGIN = 'https://spa.example';
  let clientId: string;
  beforeAll(async () => {
    clientId = await registerPublicApp([`${ORIGIN}/callback`]);
  });

  it.each(['/oauth/token', '/oauth/revoke'])('answers the preflight of %s: POST with a Content-Type, any origin, no credentials', async (path) => {
    // Act
    const reply = await fetch(`${service.authUrl}${path}`, {
      method: 'OPTIONS', headers: { origin: 'https://anyone.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });

    // Assess
    expect(reply.status).toBe(204);
    expect(Object.fromEntries([...reply.headers].filter(([name]) => name.startsWith('access-control-') || name === 'allow'))).toEqual({
      allow: 'POST, OPTIONS',
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type',
      'access-control-max-age': '3600',
    });
  });

  it('allows the origin of a public client\'s redirect URI on its answers, refusals included, and no other', async () => {
    // Act
    const refresh = (origin: string, fields: Record<string, string> = {}) =>
      tokenRequest({ grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: clientId, ...fields }, { origin });
    const registered = await refresh(ORIGIN);
    const other = await refresh('https://evil.example');
    const unknownClient = await refresh(ORIGIN, { client_id: 'no-such-client' });
    const confidential = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret },
      { origin: new URL(DEMO_CLIENT.redirectUris[0]!).origin },
    );
    const revoke = await fetch(`${service.authUrl}/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN }, body: new URLSearchParams({ token: 'x', client_id: clientId }),
    });

    // Assess
    expect([registered.status, other.status, unknownClient.status, confidential.status, revoke.status]).toEqual([400, 400, 401, 400, 200]);
    for (const reply of [registered, revoke]) {
      expect(reply.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(reply.headers.get('access-control-expose-headers')).toBe('retry-after');
    }
    for (const reply of [other, unknownClient, confidential]) expect(reply.headers.get('access-control-allow-origin')).toBeNull();
    for (const reply of [registered, other, unknownClient, confidential, revoke]) {
      expect(reply.headers.get('vary')).toContain('origin');
      expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
  it('lets a known browser application read its invalid_client (a secret or HTTP Basic it must not send) from its origin; an unknown client id, another origin or a server application get no CORS', async () => {
    // Prepare
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const refresh = { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token' };
    const revoke = (fields: Record<string, string>, headers: Record<string, string> = {}) => fetch(`${service.authUrl}/oauth/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN, ...headers }, body: new URLSearchParams({ token: 'x', ...fields }),
    });

    // Act
    const known = {
      tokenWithSecret: await tokenRequest({ ...refresh, client_id: clientId, client_secret: 'a-secret-it-never-had' }, { origin: ORIGIN }),
      tokenWithBasic: await tokenRequest(refresh, { origin: ORIGIN, authorization: basic(clientId, 'a-secret-it-never-had') }),
      deviceCodeWithSecret: await tokenRequest({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'not-a-device-code', client_id: clientId, client_secret: 'x',
      }, { origin: ORIGIN }),
      revokeWithSecret: await revoke({ client_id: clientId, client_secret: 'a-secret-it-never-had' }),
    };
    const unknown = {
      tokenUnknownId: await tokenRequest({ ...refresh, client_id: 'no-such-client', client_secret: 'x' }, { origin: ORIGIN }),
      tokenUnknownBasic: await tokenRequest(refresh, { origin: ORIGIN, authorization: basic('no-such-client', 'x') }),
      revokeUnknownId: await revoke({ client_id: 'no-such-client' }),
      otherOrigin: await tokenRequest({ ...refresh, client_id: clientId, client_secret: 'x' }, { origin: 'https://evil.example' }),
      confidentialWrongSecret: await tokenRequest(
        { ...refresh, client_id: DEMO_CLIENT.clientId, client_secret: 'wrong' }, { origin: new URL(DEMO_CLIENT.redirectUris[0]!).origin },
      ),
    };

    // Assess
    for (const [name, reply] of Object.entries({ ...known, ...unknown })) {
      expect([name, reply.status, ((await reply.json()) as { error: string }).error]).toEqual([name, 401, 'invalid_client']);
      expect(reply.headers.get('vary'), name).toContain('origin');
      expect(reply.headers.get('access-control-allow-credentials'), name).toBeNull();
    }
    for (const [name, reply] of Object.entries(known)) {
      expect([name, reply.headers.get('access-control-allow-origin'), reply.headers.get('access-control-expose-headers')]).toEqual([name, ORIGIN, 'retry-after']);
    }
    for (const [name, reply] of Object.entries(unknown)) expect([name, reply.headers.get('access-control-allow-origin')]).toEqual([name, null]);
  });
});
