import { createHmac, createPublicKey, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { issueAccessToken } from '#shared/oauth/access-token';
import { createLocalSigner } from '#shared/keys/local-signer';
import { signJwt, type TokenSigner } from '#shared/keys/signer';
import { countRequests } from '../support/count-requests';
import { tokenFor, useTestService } from '../support/service';

const [ALICE, BOB] = DEMO_USERS;
const ALICE_DEVICE = ALICE.devices[0].id;
const ALL = ['read_user', 'read_device', 'write_device'];
const HOUR_MS = 3600_000;

const base64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

describe('JWT authorizer (local gateway)', () => {
  const service = useTestService();
  let signer: TokenSigner;
  let otherSigner: TokenSigner;
  let otherKeyDir: string;
  let requests: ReturnType<typeof countRequests>;

  beforeAll(async () => {
    signer = createLocalSigner(service.signingKeyFile);
    otherKeyDir = mkdtempSync(join(tmpdir(), 'dus-other-key-'));
    otherSigner = createLocalSigner(join(otherKeyDir, 'signing-key.pem'));
    const { doc } = await import('#shared/runtime');
    requests = countRequests(doc, { api: 'resource' });
  });
  afterAll(() => {
    requests?.detach();
    if (otherKeyDir) rmSync(otherKeyDir, { recursive: true, force: true });
  });
  beforeEach(() => requests.reset());

  /** Valid access-token claims for Alice; any of them can be replaced. */
  function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const iat = Math.floor(Date.now() / 1000);
    return {
      iss: service.authUrl,
      sub: ALICE.user.id,
      aud: service.apiUrl,
      client_id: 'test-client',
      scope: ALL.join(' '),
      jti: randomUUID(),
      iat,
      exp: iat + 3600,
      ...overrides,
    };
  }

  async function call(method: string, path: string, authorization?: string, body?: string): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${service.apiUrl}${path}`, { method, headers, body });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  function expectUnauthorized(reply: Reply) {
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.text)).toEqual({ message: 'Unauthorized' });
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    const challenge = reply.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer\b/);
    expect(challenge).toContain('error="invalid_token"');
    expect(requests.total).toBe(0);
  }

  function expectForbidden(reply: Reply, scope: string) {
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.text)).toEqual({ message: 'Forbidden' });
    const challenge = reply.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer\b/);
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain(scope);
    expect(requests.total).toBe(0);
  }

  describe('answers 401 Unauthorized', () => {
    it('without an Authorization header', async () => {
      expectUnauthorized(await call('GET', '/devices'));
    });

    it.each([
      ['an empty bearer token', 'Bearer '],
      ['a word', 'Bearer not-a-token'],
      ['three garbage parts', 'Bearer aaa.bbb.ccc'],
      ['two parts', `Bearer ${base64url({ alg: 'RS256' })}.${base64url({ sub: 'x' })}`],
      ['Basic credentials', `Basic ${Buffer.from('alice@example.com:alice-demo-password').toString('base64')}`],
    ])('for a malformed token: %s', async (_, authorization) => {
      expectUnauthorized(await call('GET', '/devices', authorization));
    });

    it('for an expired token', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ALL, { now: new Date(Date.now() - 2 * HOUR_MS) });

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token issued in the future', async () => {
      // Prepare: iat ten minutes ahead, exp still in the future.
      const token = await tokenFor(service, ALICE.user.id, ALL, { now: new Date(Date.now() + 10 * 60_000) });

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token that is not valid yet (nbf in the future)', async () => {
      // Prepare
      const token = await signJwt(signer, { typ: 'at+jwt' }, claims({ nbf: Math.floor(Date.now() / 1000) + 600 }));

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token without exp', async () => {
      // Prepare
      const { exp: _, ...withoutExp } = claims();
      const token = await signJwt(signer, { typ: 'at+jwt' }, withoutExp);

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a tampered payload that keeps the original signature', async () => {
      // Prepare: Alice's read-only token rewritten to act for Bob with every scope.
      const token = await tokenFor(service, ALICE.user.id, ['read_user']);
      const [header, payload, signature] = token.split('.');
      const forged = base64url({ ...decodePart(payload!), sub: BOB.user.id, scope: ALL.join(' ') });

      // Act
      const reply = await call('GET', '/user', `Bearer ${header}.${forged}.${signature}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token whose signature was removed', async () => {
      // Prepare
      const [header, payload] = (await tokenFor(service, ALICE.user.id, ALL)).split('.');

      // Act
      const reply = await call('GET', '/devices', `Bearer ${header}.${payload}.`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token signed by another RSA key (its own kid)', async () => {
      // Prepare
      expect(otherSigner.kid).not.toBe(signer.kid);
      const token = await tokenFor(service, ALICE.user.id, ALL);
      const forged = await issueAccessToken(otherSigner, {
        issuer: service.authUrl, audience: service.apiUrl, userId: ALICE.user.id, clientId: 'test-client', scopes: ALL,
      });
      expect((await call('GET', '/devices', `Bearer ${token}`)).status).toBe(200);
      requests.reset();

      // Act
      const reply = await call('GET', '/devices', `Bearer ${forged}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token signed by another RSA key that carries the real kid', async () => {
      // Prepare
      const impostor: TokenSigner = { kid: signer.kid, sign: (data) => otherSigner.sign(data), publicJwk: () => otherSigner.publicJwk() };
      const forged = await signJwt(impostor, { typ: 'at+jwt' }, claims());
      expect(decodePart(forged.split('.')[0]!).kid).toBe(signer.kid);

      // Act
      const reply = await call('GET', '/devices', `Bearer ${forged}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for an unsigned token (alg: none)', async () => {
      // Prepare
      const token = `${base64url({ alg: 'none', typ: 'at+jwt', kid: signer.kid })}.${base64url(claims())}.`;

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for an HS256 token keyed with the public key (algorithm confusion)', async () => {
      // Prepare
      const publicPem = createPublicKey(readFileSync(service.signingKeyFile, 'utf8'))
        .export({ format: 'pem', type: 'spki' }).toString();
      const input = `${base64url({ alg: 'HS256', typ: 'at+jwt', kid: signer.kid })}.${base64url(claims())}`;
      const token = `${input}.${createHmac('sha256', publicPem).update(input).digest('base64url')}`;

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for an HS256 token keyed with the JWK modulus', async () => {
      // Prepare
      const { n } = await signer.publicJwk();
      const input = `${base64url({ alg: 'HS256', typ: 'at+jwt', kid: signer.kid })}.${base64url(claims())}`;
      const token = `${input}.${createHmac('sha256', n).update(input).digest('base64url')}`;

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token from another issuer', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ALL, { issuer: 'https://auth.attacker.example' });

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it('for a token meant for another audience', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ALL, { audience: 'https://other-api.example' });

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expectUnauthorized(reply);
    });

    it.each([
      ['GET', '/user'],
      ['GET', `/devices/${ALICE_DEVICE}`],
      ['GET', '/devices/not-a-device'],
      ['PUT', `/devices/${ALICE_DEVICE}`],
      ['GET', '/api/devices'],
    ])('on %s %s without a token, before the route looks at anything else', async (method, path) => {
      expectUnauthorized(await call(method, path, undefined, method === 'PUT' ? '{"name":"x"}' : undefined));
    });
  });

  describe('answers 403 Forbidden for a token without the route scope', () => {
    it.each([
      [['read_user'], 'GET', '/devices', 'read_device'],
      [['read_user'], 'GET', `/devices/${ALICE_DEVICE}`, 'read_device'],
      [['write_device'], 'GET', '/devices', 'read_device'],
      [['read_device'], 'PUT', `/devices/${ALICE_DEVICE}`, 'write_device'],
      [['read_user'], 'PUT', `/devices/${ALICE_DEVICE}`, 'write_device'],
      [['read_device'], 'GET', '/user', 'read_user'],
      [['write_device'], 'GET', '/user', 'read_user'],
      [[], 'GET', '/user', 'read_user'],
      [['read_user'], 'GET', '/api/devices', 'read_device'],
      [['read_device'], 'PUT', `/api/devices/${ALICE_DEVICE}`, 'write_device'],
    ])('%j on %s %s', async (scopes, method, path, needed) => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, scopes);

      // Act
      const reply = await call(method, path, `Bearer ${token}`, method === 'PUT' ? '{"name":"Not allowed"}' : undefined);

      // Assess
      expectForbidden(reply, `scope="${needed}"`);
    });

    it('leaves the device unchanged after a PUT with read_device only', async () => {
      // Prepare
      const reader = await tokenFor(service, ALICE.user.id, ['read_device']);
      const before = await call('GET', `/devices/${ALICE_DEVICE}`, `Bearer ${reader}`);

      // Act
      const reply = await call('PUT', `/devices/${ALICE_DEVICE}`, `Bearer ${reader}`, '{"name":"Not allowed","active":true}');

      // Assess
      expect(reply.status).toBe(403);
      const after = await call('GET', `/devices/${ALICE_DEVICE}`, `Bearer ${reader}`);
      expect(after.status).toBe(200);
      expect(after.text).toBe(before.text);
    });
  });

  describe('lets a valid token through', () => {
    it('without the Bearer prefix, as API Gateway does', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ['read_device']);

      // Act
      const reply = await call('GET', '/devices', token);

      // Assess
      expect(reply.status).toBe(200);
      expect((JSON.parse(reply.text) as { id: string }[]).map((d) => d.id).sort()).toEqual(ALICE.devices.map((d) => d.id).sort());
    });

    it('with a lower-case bearer prefix', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ['read_user']);

      // Act
      const reply = await call('GET', '/user', `bearer ${token}`);

      // Assess
      expect(reply.status).toBe(200);
    });

    it.each([
      [ALICE.user.id, ALICE.user.email],
      [BOB.user.id, BOB.user.email],
    ])('handing the verified claims to the handler (sub %s)', async (userId, email) => {
      // Prepare
      const token = await tokenFor(service, userId, ['read_user']);

      // Act
      const reply = await call('GET', '/user', `Bearer ${token}`);

      // Assess
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({ id: userId, email });
      expect(requests.operations).toEqual(['GetItemCommand']);
    });

    it('on every route when it holds all scopes, in any order', async () => {
      // Prepare
      const token = await tokenFor(service, ALICE.user.id, ['write_device', 'read_user', 'read_device']);

      // Act
      const replies = await Promise.all([
        call('GET', '/user', `Bearer ${token}`),
        call('GET', '/devices', `Bearer ${token}`),
        call('GET', `/devices/${ALICE_DEVICE}`, `Bearer ${token}`),
        call('PUT', `/devices/${ALICE_DEVICE}`, `Bearer ${token}`, '{}'),
      ]);

      // Assess
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 204]);
    });

    it('when aud is a list that includes the API', async () => {
      // Prepare
      const token = await signJwt(signer, { typ: 'at+jwt' }, claims({ aud: ['https://other-api.example', service.apiUrl] }));

      // Act
      const reply = await call('GET', '/devices', `Bearer ${token}`);

      // Assess
      expect(reply.status).toBe(200);
    });
  });
});
