import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { ALICE, authorize, Browser } from '../support/oauth-client';
import { useTestService } from '../support/service';

// The issuer is http://localhost:… here; the library refuses plain HTTP unless told this is a local test.
const LOCAL_HTTP = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT_URI = DEMO_CLIENT.redirectUris[0];

/**
 * The code flow and the refresh as a third-party client runs them with a certified client library
 * (panva/oauth4webapi), from discovery to the resource server's own access-token validation.
 */
describe('code flow with oauth4webapi', () => {
  const service = useTestService();
  let as: oauth.AuthorizationServer;
  let browser: Browser;
  const client: oauth.Client = { client_id: DEMO_CLIENT.clientId };

  beforeAll(async () => {
    const issuer = new URL(service.authUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, LOCAL_HTTP));
    browser = new Browser(service.authUrl);
  });

  /** Builds the authorization URL with PKCE and state as the library's users do, and drives the browser through it. */
  async function runAuthorization(options: { scope?: string; decision?: 'allow' | 'deny'; withoutState?: boolean } = {}) {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = options.withoutState ? undefined : oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: options.scope ?? 'read_device write_device',
      ...(state ? { state } : {}),
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    expect(url.origin).toBe(service.authUrl);
    const callback = await authorize(browser, Object.fromEntries(url.searchParams), { account: ALICE, decision: options.decision });
    return { callback, state, codeVerifier };
  }

  async function codeGrant(clientAuth: oauth.ClientAuth) {
    const { callback, state, codeVerifier } = await runAuthorization();
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT_URI, codeVerifier, LOCAL_HTTP);
    return oauth.processAuthorizationCodeResponse(as, client, response);
  }

  it('discovers the server from its issuer', () => {
    // Assess
    expect(as).toMatchObject({
      issuer: service.authUrl,
      token_endpoint: `${service.authUrl}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('discovers the same metadata with the RFC 8414 algorithm', async () => {
    // Prepare
    const issuer = new URL(service.authUrl);

    // Act
    const metadata = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...LOCAL_HTTP, algorithm: 'oauth2' }));

    // Assess
    expect(metadata).toEqual(as);
  });

  it.each([
    ['client_secret_post', () => oauth.ClientSecretPost(DEMO_CLIENT.clientSecret)],
    ['client_secret_basic', () => oauth.ClientSecretBasic(DEMO_CLIENT.clientSecret)],
  ])('exchanges the code with PKCE (%s)', async (_, clientAuth) => {
    // Act
    const tokens = await codeGrant(clientAuth());

    // Assess
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'read_device write_device' });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it.each([
    ['client_secret_post', () => oauth.ClientSecretPost(DEMO_CLIENT.clientSecret)],
    ['client_secret_basic', () => oauth.ClientSecretBasic(DEMO_CLIENT.clientSecret)],
  ])('refreshes, receiving a new refresh token (%s)', async (_, clientAuth) => {
    // Prepare
    const first = await codeGrant(clientAuth());

    // Act
    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth(), first.refresh_token!, LOCAL_HTTP);
    const refreshed = await oauth.processRefreshTokenResponse(as, client, response);

    // Assess
    expect(refreshed).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    expect(refreshed.access_token).not.toBe(first.access_token);
  });

  it('completes the flow without state when PKCE is used, as the library documents it (RFC 9700 §2.1)', async () => {
    // Prepare
    const { callback, codeVerifier } = await runAuthorization({ withoutState: true });

    // Act
    const params = oauth.validateAuthResponse(as, client, callback, oauth.expectNoState);
    const response = await oauth.authorizationCodeGrantRequest(
      as, client, oauth.ClientSecretBasic(DEMO_CLIENT.clientSecret), params, REDIRECT_URI, codeVerifier, LOCAL_HTTP,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);

    // Assess
    expect(callback.searchParams.has('state')).toBe(false);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read_device write_device' });
  });

  it('reports a refused refresh token as invalid_grant through the library', async () => {
    // Prepare
    const clientAuth = oauth.ClientSecretPost(DEMO_CLIENT.clientSecret);
    const first = await codeGrant(clientAuth);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, first.refresh_token!, LOCAL_HTTP));

    // Act
    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, first.refresh_token!, LOCAL_HTTP);
    const outcome = oauth.processRefreshTokenResponse(as, client, response);

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(oauth.ResponseBodyError);
    await expect(outcome).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('refuses a wrong PKCE verifier', async () => {
    // Prepare
    const { callback, state } = await runAuthorization();
    const params = oauth.validateAuthResponse(as, client, callback, state);

    // Act
    const response = await oauth.authorizationCodeGrantRequest(
      as, client, oauth.ClientSecretPost(DEMO_CLIENT.clientSecret), params, REDIRECT_URI, oauth.generateRandomCodeVerifier(), LOCAL_HTTP,
    );

    // Assess
    await expect(oauth.processAuthorizationCodeResponse(as, client, response)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  describe('validateAuthResponse', () => {
    it('rejects a callback whose iss is not the issuer (mix-up defence, RFC 9207)', async () => {
      // Prepare
      const { callback, state } = await runAuthorization();
      callback.searchParams.set('iss', 'https://attacker.example');

      // Act
      const validate = () => oauth.validateAuthResponse(as, client, callback, state);

      // Assess
      expect(validate).toThrow(oauth.OperationProcessingError);
    });

    it('rejects a callback whose state is not the one sent', async () => {
      // Prepare
      const { callback } = await runAuthorization();

      // Act
      const validate = () => oauth.validateAuthResponse(as, client, callback, oauth.generateRandomState());

      // Assess
      expect(validate).toThrow(/state/);
    });

    it('turns a denial into an access_denied AuthorizationResponseError', async () => {
      // Prepare: a scope Alice has not granted yet, so the consent page is shown and answered "deny".
      const { callback, state } = await runAuthorization({ scope: 'read_user', decision: 'deny' });

      // Act
      const validate = () => oauth.validateAuthResponse(as, client, callback, state);

      // Assess
      expect(validate).toThrow(oauth.AuthorizationResponseError);
      expect(callback.searchParams.get('error')).toBe('access_denied');
    });
  });

  describe('validateJwtAccessToken (RFC 9068)', () => {
    it('accepts our access token with the resource API as audience', async () => {
      // Prepare
      const { access_token: accessToken } = await codeGrant(oauth.ClientSecretBasic(DEMO_CLIENT.clientSecret));
      const request = new Request(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${accessToken}` } });

      // Act
      const claims = await oauth.validateJwtAccessToken(as, request, service.apiUrl, { ...LOCAL_HTTP, signingAlgorithms: ['RS256'] });

      // Assess
      expect(claims).toMatchObject({
        iss: service.authUrl, aud: service.apiUrl, sub: ALICE.user.id, client_id: DEMO_CLIENT.clientId, scope: 'read_device write_device',
      });
    });

    it('rejects it for another audience', async () => {
      // Prepare
      const { access_token: accessToken } = await codeGrant(oauth.ClientSecretPost(DEMO_CLIENT.clientSecret));
      const request = new Request(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${accessToken}` } });

      // Act
      const validation = oauth.validateJwtAccessToken(as, request, 'https://other-api.example', LOCAL_HTTP);

      // Assess
      await expect(validation).rejects.toThrow(/aud/);
    });
  });
});
