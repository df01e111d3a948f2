import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJwtAuthorizer, type AuthorizerResult } from '#local/jwt-authorizer';

const AUDIENCE = 'https://api.example.test';
const ROUTE = ['read_device', 'write_device'];

interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string, alg = 'RS256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
}

/**
 * The local gateway's JWT authorizer against an issuer of the test's own (OpenID discovery and
 * JWKS on 127.0.0.1), checked through what it answers: the result API Gateway would act on.
 */
describe('JWT authorizer (local stand-in for API Gateway)', () => {
  let server: Server;
  let issuer: string;
  let key: Key;
  let published: Key[];
  let discoveryUp: boolean;
  let fetches: { discovery: number; jwks: number };

  beforeAll(async () => {
    key = await makeKey('key-1');
    server = createServer((request, response) => {
      if (request.url === '/.well-known/openid-configuration') {
        fetches.discovery++;
        if (!discoveryUp) return void response.writeHead(503).end();
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      }
      if (request.url === '/jwks') {
        fetches.jwks++;
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
      }
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    published = [key];
    discoveryUp = true;
    fetches = { discovery: 0, jwks: 0 };
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  const nowSeconds = () => Math.floor(Date.now() / 1000);

  /** A token of `signing` (default: the published key) with the usual claims, `claims` replacing or (undefined) removing them. */
  async function token(claims: Record<string, unknown> = {}, signing: Key = key, alg = 'RS256'): Promise<string> {
    const payload: Record<string, unknown> = {
      iss: issuer, aud: AUDIENCE, sub: 'user-1', client_id: 'app-1', scope: 'read_device', iat: nowSeconds(), exp: nowSeconds() + 3600, ...claims,
    };
    for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
    return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg, kid: signing.kid, typ: 'at+jwt' }).sign(signing.privateKey);
  }

  const authorizer = () => createJwtAuthorizer({ issuer, audience: [AUDIENCE, 'https://other-api.example.test'] });

  function unauthorized(description: string, scope = ROUTE.join(' ')): AuthorizerResult {
    return {
      ok: false, status: 401,
      headers: { 'www-authenticate': `Bearer scope="${scope}" error="invalid_token" error_description="${description}"` },
      body: '{"message":"Unauthorized"}',
    };
  }

  it('lets a valid token through, with its scopes and its claims as strings (payload 2.0)', async () => {
    const exp = nowSeconds() + 3600;
    const result = await authorizer()(`Bearer ${await token({ roles: ['a', 'b'], cnf: { x: 1 }, admin: false, exp })}`, ROUTE);

    expect(result).toEqual({
      ok: true,
      scopes: ['read_device'],
      claims: expect.objectContaining({ sub: 'user-1', aud: AUDIENCE, exp: String(exp), roles: '[a b]', cnf: '{"x":1}', admin: 'false' }),
    });
  });

  it('takes the token with a Bearer prefix in any case, or without one', async () => {
    const jwt = await token();
    for (const header of [`Bearer ${jwt}`, `bearer ${jwt}`, `BEARER   ${jwt}`, jwt, ` ${jwt} `]) {
      expect(await authorizer()(header, ROUTE)).toMatchObject({ ok: true });
    }
  });

  it('answers 401 without a token, naming no scope', async () => {
    expect(await authorizer()(undefined, ROUTE)).toEqual(unauthorized('no token in the authorization header', ''));
    expect(await authorizer()('', ROUTE)).toEqual(unauthorized('no token in the authorization header', ''));
  });

  it('answers 401 for an expired token, and for one without exp', async () => {
    expect(await authorizer()(await token({ exp: nowSeconds() - 10 }), ROUTE)).toEqual(unauthorized('the token has expired'));
    expect(await authorizer()(await token({ exp: undefined }), ROUTE)).toEqual(unauthorized('the token has an invalid exp claim'));
  });

  it('answers 401 for a token not valid yet, or issued in the future; one issued this second passes', async () => {
    expect(await authorizer()(await token({ nbf: nowSeconds() + 60 }), ROUTE)).toEqual(unauthorized('the token is not valid yet'));
    expect(await authorizer()(await token({ iat: nowSeconds() + 60 }), ROUTE)).toEqual(unauthorized('the token was issued in the future'));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T10:00:00.500Z'));
    expect(await authorizer()(await token({ iat: nowSeconds() }), ROUTE)).toMatchObject({ ok: true });
  });

  it('answers 401 for another issuer', async () => {
    expect(await authorizer()(await token({ iss: 'https://evil.example' }), ROUTE)).toEqual(unauthorized('the token does not have a valid issuer'));
  });

  it('answers 401 for a key the JWKS does not have, a changed signature, another algorithm, or no JWT at all', async () => {
    expect(await authorizer()(await token({}, await makeKey('unknown-key')), ROUTE)).toEqual(unauthorized('the token was signed by an unknown key'));
    const forged = await token({}, { ...(await makeKey('key-1')) });
    expect(await authorizer()(forged, ROUTE)).toEqual(unauthorized('the token signature is invalid'));
    expect(await authorizer()(await token({}, await makeKey('key-1', 'PS256'), 'PS256'), ROUTE)).toEqual(unauthorized('the token signing method is not allowed'));
    expect(await authorizer()('not-a-jwt', ROUTE)).toEqual(unauthorized('the token is malformed'));
  });

  it('accepts the other RSA algorithms API Gateway accepts', async () => {
    const rs512 = await makeKey('key-512', 'RS512');
    published = [key, { ...rs512, jwk: { ...rs512.jwk, alg: 'RS512' } }];
    expect(await authorizer()(await token({}, rs512, 'RS512'), ROUTE)).toMatchObject({ ok: true });
  });

  it('checks aud against the audiences, and client_id only when the token has no aud', async () => {
    expect(await authorizer()(await token({ aud: ['https://x.example', 'https://other-api.example.test'] }), ROUTE)).toMatchObject({ ok: true });
    expect(await authorizer()(await token({ aud: undefined, client_id: AUDIENCE }), ROUTE)).toMatchObject({ ok: true });
    const invalid = unauthorized('the token does not have a valid audience');
    expect(await authorizer()(await token({ aud: 'https://x.example', client_id: AUDIENCE }), ROUTE)).toEqual(invalid);
    expect(await authorizer()(await token({ aud: undefined, client_id: 'app-1' }), ROUTE)).toEqual(invalid);
    expect(await authorizer()(await token({ aud: [], client_id: AUDIENCE }), ROUTE)).toEqual(invalid);
  });

  it('answers 403 in API Gateway format for a token with none of the route scopes; one of them is enough', async () => {
    expect(await authorizer()(await token({ scope: 'read_user  read_devices' }), ROUTE)).toEqual({
      ok: false, status: 403,
      headers: { 'www-authenticate': 'Bearer scope="read_device write_device" error="insufficient_scope" error_description="expected scopes: [read_device write_device]"' },
      body: '{"message":"Forbidden"}',
    });
    expect(await authorizer()(await token({ scope: undefined }), ROUTE)).toMatchObject({ ok: false, status: 403 });
    expect(await authorizer()(await token({ scope: ' write_device  read_user ' }), ROUTE)).toMatchObject({ ok: true, scopes: ['write_device', 'read_user'] });
  });

  it('reads the scopes from scp (a list) when the token has no scope claim', async () => {
    expect(await authorizer()(await token({ scope: undefined, scp: ['read_user', 'write_device'] }), ROUTE)).toMatchObject({ ok: true, scopes: ['read_user', 'write_device'] });
    expect(await authorizer()(await token({ scope: 'read_user', scp: ['write_device'] }), ROUTE)).toMatchObject({ ok: false, status: 403 });
  });

  it('lets any valid token through a route that names no scope', async () => {
    expect(await authorizer()(await token({ scope: undefined }), [])).toEqual({ ok: true, scopes: [], claims: expect.any(Object) });
  });

  it('finds the JWKS through discovery once, and tries discovery again after it failed', async () => {
    const authorize = authorizer();
    discoveryUp = false;
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: false, status: 401 });
    discoveryUp = true;
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: true });
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: true });
    expect(fetches).toEqual({ discovery: 2, jwks: 1 });
  });

  it('keeps the JWKS an hour, and fetches it for an unseen kid at most every 30 seconds', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = new Date('2026-11-23T10:00:00.000Z').getTime();
    vi.setSystemTime(start);
    const authorize = authorizer();
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: true });

    const next = await makeKey('key-2');
    published = [key, next];
    vi.setSystemTime(start + 29_000);
    expect(await authorize(await token({}, next), ROUTE)).toEqual(unauthorized('the token was signed by an unknown key'));
    expect(fetches.jwks).toBe(1);
    vi.setSystemTime(start + 31_000);
    expect(await authorize(await token({}, next), ROUTE)).toMatchObject({ ok: true });
    expect(fetches.jwks).toBe(2);

    vi.setSystemTime(start + 31_000 + 3_599_000);
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: true });
    expect(fetches.jwks).toBe(2);
    vi.setSystemTime(start + 31_000 + 3_601_000);
    expect(await authorize(await token(), ROUTE)).toMatchObject({ ok: true });
    expect(fetches.jwks).toBe(3);
  });
});
