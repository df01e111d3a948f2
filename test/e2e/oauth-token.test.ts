import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { ALICE, Browser, obtainCode } from '../support/oauth-client';
import { useTestService } from '../support/service';

interface TokenReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

interface TokenRequestOptions {
  /** Client credentials sent with HTTP Basic (client_secret_basic). */
  basic?: { id: string; secret: string };
  /** A raw Authorization header (instead of `basic`). */
  authorization?: string;
  contentType?: string;
  /** A raw body instead of the form-encoded fields. */
  rawBody?: string;
}

const basicHeader = ({ id, secret }: { id: string; secret: string }) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const ALICE_DEVICE_IDS = DEMO_USERS[0].devices.map((d) => d.id).sort();
const DEMO_BASIC = { id: DEMO_CLIENT.clientId, secret: DEMO_CLIENT.clientSecret };
const POST_CREDENTIALS = { client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret };

describe('token endpoint', () => {
  const service = useTestService();
  let browser: Browser;

  beforeAll(() => {
    browser = new Browser(service.authUrl);
  });

  async function post(path: string, fields: Record<string, string>, options: TokenRequestOptions = {}): Promise<TokenReply> {
    const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/x-www-form-urlencoded' };
    if (options.basic) headers.authorization = basicHeader(options.basic);
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    const response = await fetch(`${service.authUrl}${path}`, {
      method: 'POST', headers, body: options.rawBody ?? new URLSearchParams(fields).toString(), redirect: 'manual',
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) as Record<string, unknown> : {} };
  }

  const token = (fields: Record<string, string>, options?: TokenRequestOptions) => post('/oauth/token', fields, options);

  /** The form of a code exchange with a fresh code (client_secret_post); any field can be replaced. */
  async function codeForm(overrides: Record<string, string | undefined> = {}, scope = 'read_device') {
    const { code, redirectUri } = await obtainCode(browser, { scope });
    const fields: Record<string, string | undefined> = {
      grant_type: 'authorization_code', code, redirect_uri: redirectUri, ...POST_CREDENTIALS, ...overrides,
    };
    return Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined));
  }

  /** A token response for a fresh code. */
  async function issued(scope = 'read_device') {
    const reply = await token(await codeForm({}, scope));
    expect(reply.status).toBe(200);
    return reply.body as { access_token: string; refresh_token: string; scope: string };
  }

  function expectTokenError(reply: TokenReply, status: number, error: string) {
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ error, error_description: expect.any(String) });
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('no-store');
  }

  describe('authorization_code grant', () => {
    it('answers 200 with the token response, never cached', async () => {
      // Prepare
      const form = await codeForm();

      // Act
      const reply = await token(form);

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'read_device',
      });
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(reply.headers.get('pragma')).toBe('no-cache');
    });

    it('accepts the client credentials with HTTP Basic (client_secret_basic)', async () => {
      // Prepare
      const { client_id: _, client_secret: __, ...form } = await codeForm();

      // Act
      const reply = await token(form, { basic: DEMO_BASIC });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.body.token_type).toBe('Bearer');
    });

    it('accepts HTTP Basic with the same client_id repeated in the body', async () => {
      // Prepare
      const { client_secret: _, ...form } = await codeForm();

      // Act
      const reply = await token(form, { basic: DEMO_BASIC });

      // Assess
      expect(reply.status).toBe(200);
    });

    it('refuses the credentials sent both ways at once with 400', async () => {
      // Prepare
      const form = await codeForm();

      // Act
      const reply = await token(form, { basic: DEMO_BASIC });

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
    });

    it('refuses a second exchange of the same code with invalid_grant', async () => {
      // Prepare
      const form = await codeForm();
      expect((await token(form)).status).toBe(200);

      // Act
      const reply = await token(form);

      // Assess
      expectTokenError(reply, 400, 'invalid_grant');
    });

    it('refuses a redirect_uri other than the one of the request with invalid_grant', async () => {
      // Prepare
      const form = await codeForm({ redirect_uri: 'http://localhost:8080/other' });

      // Act
      const reply = await token(form);

      // Assess
      expectTokenError(reply, 400, 'invalid_grant');
    });

    it('gives an access token the gateway accepts within its scopes and refuses outside them', async () => {
      // Prepare
      const { access_token: accessToken } = await issued('read_device');
      const bearer = { authorization: `Bearer ${accessToken}` };

      // Act
      const devices = await fetch(`${service.apiUrl}/devices`, { headers: bearer });
      const user = await fetch(`${service.apiUrl}/user`, { headers: bearer });

      // Assess
      expect(devices.status).toBe(200);
      const ids = ((await devices.json()) as { id: string }[]).map((d) => d.id).sort();
      expect(ids).toEqual(ALICE_DEVICE_IDS);
      expect(user.status).toBe(403);
      expect(user.headers.get('www-authenticate')).toContain('insufficient_scope');
    });
  });

  describe('refresh_token grant', () => {
    it('rotates the refresh token (client_secret_post)', async () => {
      // Prepare
      const first = await issued();

      // Act
      const reply = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...POST_CREDENTIALS });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'read_device',
      });
      expect(reply.body.refresh_token).not.toBe(first.refresh_token);
      expect(reply.headers.get('cache-control')).toBe('no-store');
    });

    it('rotates the refresh token (client_secret_basic)', async () => {
      // Prepare
      const first = await issued();

      // Act
      const reply = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }, { basic: DEMO_BASIC });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.body.refresh_token).not.toBe(first.refresh_token);
    });

    it('narrows the scope on request and refuses a broader one with invalid_scope', async () => {
      // Prepare
      const first = await issued('read_device write_device');

      // Act
      const broader = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'read_user', ...POST_CREDENTIALS });
      const narrower = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'read_device', ...POST_CREDENTIALS });

      // Assess
      expectTokenError(broader, 400, 'invalid_scope');
      expect(narrower.status).toBe(200);
      expect(narrower.body.scope).toBe('read_device');
    });
  });

  describe('errors (docs/api.md#token-errors)', () => {
    it.each([
      ['grant_type', 'authorization_code'],
      ['code', 'authorization_code'],
      ['redirect_uri', 'authorization_code'],
      ['refresh_token', 'refresh_token'],
    ])('answers 400 invalid_request without %s (%s grant)', async (missing, grant) => {
      // Prepare
      const form = grant === 'authorization_code'
        ? await codeForm()
        : { grant_type: 'refresh_token', refresh_token: (await issued()).refresh_token, ...POST_CREDENTIALS };
      const { [missing]: _, ...incomplete } = form;

      // Act
      const reply = await token(incomplete);

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
      expect(reply.body.error_description).toContain(missing);
    });

    it.each(['authorization_code', 'refresh_token'])('answers 400 invalid_request for a client_id without client_secret (%s grant): a required parameter, docs/api.md#token-errors', async (grant) => {
      // Prepare
      const form = grant === 'authorization_code'
        ? await codeForm()
        : { grant_type: 'refresh_token', refresh_token: (await issued()).refresh_token, ...POST_CREDENTIALS };
      const { client_secret: _, ...incomplete } = form;

      // Act
      const reply = await token(incomplete);

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
      expect(reply.headers.get('www-authenticate')).toBeNull();
      expect((await token(form)).status).toBe(200);
    });

    it('answers 400 invalid_request for an empty body', async () => {
      // Act
      const reply = await token({});

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
    });

    it('answers 401 invalid_client for a wrong client secret in the body, with a Basic challenge all the same (RFC 9110 §15.5.2)', async () => {
      // Prepare
      const form = await codeForm({ client_secret: `${DEMO_CLIENT.clientSecret}x` });

      // Act
      const reply = await token(form);

      // Assess: a 401 always names a scheme the client may use
      expectTokenError(reply, 401, 'invalid_client');
      expect(reply.headers.get('www-authenticate')).toBe('Basic realm="oauth"');
    });

    it('answers 401 invalid_client for an unknown client', async () => {
      // Prepare
      const form = await codeForm({ client_id: 'no-such-client' });

      // Act
      const reply = await token(form);

      // Assess
      expectTokenError(reply, 401, 'invalid_client');
    });

    it('answers 401 invalid_client for a client_id too long to be one (or to fit in a key), in the body and with Basic', async () => {
      // Prepare
      const huge = 'c'.repeat(5000);
      const form = await codeForm({ client_id: huge });
      const { client_id: _, client_secret: __, ...basicForm } = await codeForm();

      // Act
      const inBody = await token(form);
      const withBasic = await token(basicForm, { basic: { id: huge, secret: DEMO_CLIENT.clientSecret } });
      const revoke = await post('/oauth/revoke', { token: 'anything', client_id: huge, client_secret: DEMO_CLIENT.clientSecret });

      // Assess
      expectTokenError(inBody, 401, 'invalid_client');
      expectTokenError(withBasic, 401, 'invalid_client');
      expectTokenError(revoke, 401, 'invalid_client');
    });

    it.each([
      ['a wrong secret', { id: DEMO_CLIENT.clientId, secret: 'wrong-secret' }],
      ['an unknown client', { id: 'no-such-client', secret: DEMO_CLIENT.clientSecret }],
    ])('answers 401 invalid_client with a Basic challenge for %s sent with HTTP Basic', async (_, basic) => {
      // Prepare
      const { client_id: __, client_secret: ___, ...form } = await codeForm();

      // Act
      const reply = await token(form, { basic });

      // Assess
      expectTokenError(reply, 401, 'invalid_client');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Basic\b/);
    });

    it('does not spend the code on a failed client authentication', async () => {
      // Prepare
      const form = await codeForm();
      expect((await token({ ...form, client_secret: 'wrong' })).status).toBe(401);

      // Act
      const reply = await token(form);

      // Assess
      expect(reply.status).toBe(200);
    });

    // The device_code grant is supported (test/e2e/device-flow.test.ts); JWT bearer, token exchange and CIBA are not.
    it.each(['password', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:openid:params:grant-type:ciba'])(
      'answers 400 invalid_grant for grant_type %s',
      async (grantType) => {
        // Act
        const reply = await token({ grant_type: grantType, ...POST_CREDENTIALS, username: ALICE.user.email, password: ALICE.password });

        // Assess
        expectTokenError(reply, 400, 'invalid_grant');
      },
    );

    it('answers 400 invalid_request for a JSON body instead of a form', async () => {
      // Prepare
      const form = await codeForm();

      // Act
      const reply = await token({}, { contentType: 'application/json', rawBody: JSON.stringify(form) });

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
    });

    it.each(['code', 'grant_type', 'client_id'])('answers 400 invalid_request for a repeated %s', async (name) => {
      // Prepare
      const form = await codeForm();
      const body = `${new URLSearchParams(form)}&${new URLSearchParams({ [name]: form[name]! })}`;

      // Act
      const reply = await token({}, { rawBody: body });

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
      expect(reply.body.error_description).toContain(name);
    });

    it('answers invalid_grant for an unknown refresh token', async () => {
      // Act
      const reply = await token({ grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', ...POST_CREDENTIALS });

      // Assess
      expectTokenError(reply, 400, 'invalid_grant');
    });
  });

  describe('client authentication failures: 401 invalid_client, always with a Basic challenge (RFC 6749 §5.2, RFC 9110 §15.5.2)', () => {
    /** A code exchange, a refresh and a revocation that would succeed with the client's credentials. */
    async function requests() {
      const { client_id: _, client_secret: __, ...exchange } = await codeForm();
      const refreshToken = (await issued()).refresh_token;
      return {
        exchange,
        refresh: { grant_type: 'refresh_token', refresh_token: refreshToken },
        revocation: { token: refreshToken },
        /** Whether the code and the refresh token are still unspent and unrevoked. */
        async untouched() {
          expect((await token({ ...exchange, ...POST_CREDENTIALS })).status).toBe(200);
          expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...POST_CREDENTIALS })).status).toBe(200);
        },
      };
    }

    it.each([
      ['no credentials at all', {}],
      ['a client_id only', { client_id: DEMO_CLIENT.clientId }],
      ['a client_secret only', { client_secret: DEMO_CLIENT.clientSecret }],
    ])('%s: 400 invalid_request without a challenge at the token endpoint (docs/api.md#token-errors), 401 invalid_client with a Basic challenge at revocation, and nothing changes', async (_, credentials) => {
      // Prepare
      const sent = await requests();

      // Act
      const replies = [
        await token({ ...sent.exchange, ...credentials }),
        await token({ ...sent.refresh, ...credentials }),
        await post('/oauth/revoke', { ...sent.revocation, ...credentials }),
      ];

      // Assess
      expectTokenError(replies[0]!, 400, 'invalid_request');
      expectTokenError(replies[1]!, 400, 'invalid_request');
      expectTokenError(replies[2]!, 401, 'invalid_client');
      expect(replies.map((reply) => reply.headers.get('www-authenticate'))).toEqual([null, null, 'Basic realm="oauth"']);
      await sent.untouched();
    });

    const basic = (value: string) => `Basic ${Buffer.from(value).toString('base64')}`;
    it.each([
      ['a wrong secret', basic(`${DEMO_CLIENT.clientId}:wrong`)],
      ['an unknown client', basic(`no-such-client:${DEMO_CLIENT.clientSecret}`)],
      ['an empty secret', basic(`${DEMO_CLIENT.clientId}:`)],
      ['no colon', basic(DEMO_CLIENT.clientId)],
      ['an empty client id', basic(`:${DEMO_CLIENT.clientSecret}`)],
      ['no credentials after the scheme', 'Basic'],
      ['credentials that are not base64', 'Basic !!!'],
      ['a client id too long to be one', basic(`${'c'.repeat(5000)}:${DEMO_CLIENT.clientSecret}`)],
      ['another scheme', `Bearer ${DEMO_CLIENT.clientSecret}`],
      ['a scheme alone', 'Digest'],
    ])('HTTP Basic with %s: 401 invalid_client with WWW-Authenticate: Basic realm at both endpoints, and nothing changes', async (_, authorization) => {
      // Prepare
      const sent = await requests();

      // Act
      const replies = [
        await token(sent.exchange, { authorization }),
        await token(sent.refresh, { authorization }),
        await post('/oauth/revoke', sent.revocation, { authorization }),
      ];

      // Assess
      for (const reply of replies) {
        expectTokenError(reply, 401, 'invalid_client');
        expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"$/);
      }
      await sent.untouched();
    });
  });

  describe('HTTP Basic (RFC 6749 §2.3.1)', () => {
    const encoded = Buffer.from(`${DEMO_CLIENT.clientId}:${DEMO_CLIENT.clientSecret}`).toString('base64');

    it.each(['basic', 'BASIC', 'bAsIc', 'Basic '])('matches the scheme %j case-insensitively, at both endpoints', async (scheme) => {
      // Prepare
      const { client_id: _, client_secret: __, ...exchange } = await codeForm();
      const { refresh_token: refreshToken } = await issued();
      const authorization = `${scheme} ${encoded}`;

      // Act
      const exchanged = await token(exchange, { authorization });
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization });
      const revoked = await post('/oauth/revoke', { token: (refreshed.body as { refresh_token: string }).refresh_token }, { authorization });

      // Assess
      expect(exchanged.status).toBe(200);
      expect(refreshed.status).toBe(200);
      expect(revoked.status).toBe(200);
    });

    it.each([
      ['another client', 'another-client'],
      ['the same id in another case', DEMO_CLIENT.clientId.toUpperCase()],
    ])('answers 400 invalid_request for a body client_id of %s than the Basic one, at both endpoints, and nothing changes', async (_, bodyId) => {
      // Prepare
      const { client_id: __, client_secret: ___, ...exchange } = await codeForm();
      const { refresh_token: refreshToken } = await issued();
      expect(bodyId).not.toBe(DEMO_CLIENT.clientId);

      // Act
      const replies = [
        await token({ ...exchange, client_id: bodyId }, { basic: DEMO_BASIC }),
        await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: bodyId }, { basic: DEMO_BASIC }),
        await post('/oauth/revoke', { token: refreshToken, client_id: bodyId }, { basic: DEMO_BASIC }),
      ];

      // Assess
      for (const reply of replies) expectTokenError(reply, 400, 'invalid_request');
      expect((await token(exchange, { basic: DEMO_BASIC })).status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: DEMO_BASIC })).status).toBe(200);
    });

    it.each([
      ['right', DEMO_CLIENT.clientSecret],
      ['wrong', 'wrong-secret'],
    ])('refuses two authentication methods at once (Basic and a %s client_secret in the body) with 400 invalid_request, at both endpoints', async (_, secret) => {
      // Prepare
      const { client_id: __, client_secret: ___, ...exchange } = await codeForm();
      const { refresh_token: refreshToken } = await issued();
      const both = { client_id: DEMO_CLIENT.clientId, client_secret: secret };

      // Act
      const replies = [
        await token({ ...exchange, ...both }, { basic: DEMO_BASIC }),
        await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...both }, { basic: DEMO_BASIC }),
        await post('/oauth/revoke', { token: refreshToken, ...both }, { basic: DEMO_BASIC }),
        await token({ ...exchange, ...both }, { authorization: 'Basic' }),
      ];

      // Assess
      for (const reply of replies) expectTokenError(reply, 400, 'invalid_request');
      expect((await token(exchange, { basic: DEMO_BASIC })).status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: DEMO_BASIC })).status).toBe(200);
    });
  });

  describe('a parameter sent with an empty value is treated as omitted (RFC 6749 §3.1)', () => {
    it('code_challenge= in the authorization request: a code without PKCE, exchanged with code_verifier= or without', async () => {
      // Prepare
      const first = await codeForm({ code_verifier: '' });
      const { code, redirectUri } = await obtainCode(browser, { code_challenge: '', code_challenge_method: '' });

      // Act
      const withEmptyVerifier = await token(first);
      const withEmptyChallenge = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: '', ...POST_CREDENTIALS });

      // Assess
      expect(withEmptyVerifier.status).toBe(200);
      expect(withEmptyChallenge.status).toBe(200);
    });

    it('code_verifier= for a code issued with a challenge is no verifier: invalid_grant, and the code stays unspent', async () => {
      // Prepare
      const verifier = `verifier-${'v'.repeat(40)}`;
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const { code, redirectUri } = await obtainCode(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
      const form = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, ...POST_CREDENTIALS };

      // Act
      const empty = await token({ ...form, code_verifier: '' });
      const right = await token({ ...form, code_verifier: verifier });

      // Assess
      expectTokenError(empty, 400, 'invalid_grant');
      expect(right.status).toBe(200);
    });

    it('client_secret= is no secret: omitted (400 at the token endpoint, 401 at revocation), Basic with an empty secret 401, and nothing is spent or revoked', async () => {
      // Prepare
      const form = await codeForm();
      const { refresh_token: refreshToken } = await issued();

      // Act
      const exchange = await token({ ...form, client_secret: '' });
      const refresh = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: DEMO_CLIENT.clientId, client_secret: '' });
      const revocation = await post('/oauth/revoke', { token: refreshToken, client_id: DEMO_CLIENT.clientId, client_secret: '' });
      const basicEmpty = await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: { id: DEMO_CLIENT.clientId, secret: '' } });

      // Assess
      for (const reply of [exchange, refresh]) expectTokenError(reply, 400, 'invalid_request');
      expectTokenError(revocation, 401, 'invalid_client');
      expectTokenError(basicEmpty, 401, 'invalid_client');
      expect(basicEmpty.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect((await token(form)).status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...POST_CREDENTIALS })).status).toBe(200);
    });

    it('scope= on refresh asks for the granted scopes, not for none', async () => {
      // Prepare
      const { refresh_token: refreshToken } = await issued('read_device write_device');

      // Act
      const reply = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, scope: '', ...POST_CREDENTIALS });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.body.scope).toBe('read_device write_device');
    });
  });

  describe('discovery', () => {
    it('publishes RFC 8414 metadata for both well-known names', async () => {
      // Act
      const [oidc, oauth] = await Promise.all([
        fetch(`${service.authUrl}/.well-known/openid-configuration`),
        fetch(`${service.authUrl}/.well-known/oauth-authorization-server`),
      ]);

      // Assess
      expect(oidc.status).toBe(200);
      expect(oauth.status).toBe(200);
      const metadata = (await oidc.json()) as Record<string, unknown>;
      expect(await oauth.json()).toEqual(metadata);
      expect(metadata).toMatchObject({
        issuer: service.authUrl,
        authorization_endpoint: `${service.authUrl}/oauth/authorize`,
        token_endpoint: `${service.authUrl}/oauth/token`,
        revocation_endpoint: `${service.authUrl}/oauth/revoke`,
        jwks_uri: expect.stringMatching(new RegExp(`^${service.authUrl}/`)),
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        device_authorization_endpoint: `${service.authUrl}/oauth/device_authorization`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      });
      expect([...(metadata.scopes_supported as string[])].sort()).toEqual(['read_device', 'read_user', 'write_device']);
      // `none`: public clients (native and browser applications) name themselves with client_id alone.
      expect([...(metadata.token_endpoint_auth_methods_supported as string[])].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
      expect([...(metadata.revocation_endpoint_auth_methods_supported as string[])].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    });

    it('is all a resource server needs to verify an access token', async () => {
      // Prepare
      const { access_token: accessToken } = await issued('read_device write_device');
      const metadata = (await (await fetch(`${service.authUrl}/.well-known/openid-configuration`)).json()) as { issuer: string; jwks_uri: string };

      // Act
      const { payload, protectedHeader } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(metadata.jwks_uri)), {
        issuer: service.authUrl, audience: service.apiUrl, typ: 'at+jwt', algorithms: ['RS256'],
      });

      // Assess
      expect(metadata.issuer).toBe(service.authUrl);
      expect(protectedHeader.kid).toEqual(expect.any(String));
      expect(payload).toMatchObject({ sub: ALICE.user.id, client_id: DEMO_CLIENT.clientId, scope: 'read_device write_device' });
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(decodeProtectedHeader(accessToken).alg).toBe('RS256');
    });
  });

  describe('revocation', () => {
    const revoke = (fields: Record<string, string>, options?: TokenRequestOptions) => post('/oauth/revoke', fields, options);

    it('revokes a refresh token: 200, and the token is refused afterwards', async () => {
      // Prepare
      const { refresh_token: refreshToken } = await issued();

      // Act
      const reply = await revoke({ token: refreshToken, token_type_hint: 'refresh_token', ...POST_CREDENTIALS });

      // Assess
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      const refresh = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...POST_CREDENTIALS });
      expectTokenError(refresh, 400, 'invalid_grant');
    });

    it('revokes with HTTP Basic too', async () => {
      // Prepare
      const { refresh_token: refreshToken } = await issued();

      // Act
      const reply = await revoke({ token: refreshToken }, { basic: DEMO_BASIC });

      // Assess
      expect(reply.status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: DEMO_BASIC })).status).toBe(400);
    });

    it('answers 200 for an access token', async () => {
      // Prepare
      const { access_token: accessToken } = await issued();

      // Act
      const reply = await revoke({ token: accessToken, token_type_hint: 'access_token', ...POST_CREDENTIALS });

      // Assess
      expect(reply.status).toBe(200);
    });

    it('answers 200 for an unknown token', async () => {
      // Act
      const reply = await revoke({ token: 'never-issued', ...POST_CREDENTIALS });

      // Assess
      expect(reply.status).toBe(200);
    });

    it('answers 401 invalid_client for a wrong client secret and keeps the token', async () => {
      // Prepare
      const { refresh_token: refreshToken } = await issued();

      // Act
      const reply = await revoke({ token: refreshToken, client_id: DEMO_CLIENT.clientId, client_secret: 'wrong' });

      // Assess
      expectTokenError(reply, 401, 'invalid_client');
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...POST_CREDENTIALS })).status).toBe(200);
    });

    it('answers 401 invalid_client without client credentials (RFC 6749 §5.2: no client authentication included), and keeps the token', async () => {
      // Prepare
      const { refresh_token: refreshToken } = await issued();

      // Act
      const reply = await revoke({ token: refreshToken });

      // Assess
      expectTokenError(reply, 401, 'invalid_client');
      expect((await token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...POST_CREDENTIALS })).status).toBe(200);
    });

    it('answers 400 invalid_request without a token', async () => {
      // Act
      const reply = await revoke({ ...POST_CREDENTIALS });

      // Assess
      expectTokenError(reply, 400, 'invalid_request');
    });
  });
});
