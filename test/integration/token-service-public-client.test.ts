import { describe, expect, it } from 'vitest';
import type { ClientCredentials } from '#shared/oauth/client-auth';
import { ClientAuthMethodError } from '#shared/oauth/client-auth';
import { createClientCache } from '#shared/oauth/client-cache';
import { createTokenService } from '#shared/oauth/token-service';
import { BadRequestError, InvalidClientError } from '#shared/errors';
import {
  AUDIENCE, current, doc, expectInvalidGrant, expectNothingWritten, expectOAuthError, familyStatus, grants, ISSUER, pkcePair,
  REDIRECT_URI, requests, SECRET, seedCode, signer, table, tokens, revokeToken, useTokenService, verifyAccessToken,
} from '../support/token-service';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { DeleteCommand } from '#shared/data/commands';
import { clientKey } from '#shared/data/item-keys';

// A public client (a native or browser application, RFC 8252, OAuth 2.1) at the token service: it
// names itself with client_id alone (token_endpoint_auth_method none) and proves its code with PKCE;
// a client presenting the other type's credentials is refused with nothing written. Over HTTP and
// with real client libraries: test/e2e/public-clients.test.ts.
describe('token service, public clients', () => {
  useTokenService();

  /** A public client (no secret) and a code issued to it with a PKCE challenge. */
  async function seedPublicCode() {
    const pkce = pkcePair();
    const seeded = await seedCode({ client: { clientType: 'public', secretHash: undefined }, code: { codeChallenge: pkce.challenge } });
    const none: ClientCredentials = { clientId: seeded.client.clientId, basic: false, missing: 'invalid_request' };
    return { ...seeded, none, verifier: pkce.verifier };
  }

  it('exchanges the code with its verifier and client_id alone, in two requests, then refreshes and revokes the same way', async () => {
    // Prepare
    const { client, none, code, verifier } = await seedPublicCode();

    // Act
    const issued = await tokens.exchangeCode(none, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });
    const exchangeRequests = [...requests.operations];
    const refreshed = await tokens.refresh(none, { refreshToken: issued.refresh_token });
    await revokeToken({ ...none, missing: 'invalid_client' }, refreshed.refresh_token);

    // Assess
    expect(exchangeRequests).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
    expect((await verifyAccessToken(issued.access_token)).payload).toMatchObject({ client_id: client.clientId, aud: AUDIENCE, iss: ISSUER });
    expect(refreshed.refresh_token).not.toBe(issued.refresh_token);
    expect(await familyStatus(grantTokenNames(refreshed.refresh_token)!.familyId)).toBe('revoked');
  });

  it('tells the credentials\' hook which client it named', async () => {
    // Prepare
    const { client, none, code, verifier } = await seedPublicCode();
    const seen: string[] = [];

    // Act
    await tokens.exchangeCode({ ...none, identified: (c) => seen.push(c.clientId) }, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

    // Assess
    expect(seen).toEqual([client.clientId]);
  });

  it('refuses the code without its verifier, or with another one, writing nothing', async () => {
    // Prepare
    const { client, none, code } = await seedPublicCode();

    // Act, Assess (each refusal awaited before the next request: none is left unhandled)
    await expectInvalidGrant(tokens.exchangeCode(none, { code, redirectUri: REDIRECT_URI }));
    await expectInvalidGrant(tokens.exchangeCode(none, { code, redirectUri: REDIRECT_URI, codeVerifier: pkcePair().verifier }));
    await expectNothingWritten(client.clientId, code);
  });

  it.each([
    ['a secret in the body', false],
    ['HTTP Basic', true],
  ])('refuses a public client presenting %s (invalid_client, saying which method it uses), writing nothing', async (_, basic) => {
    // Prepare
    const { client, code, verifier } = await seedPublicCode();
    const withSecret: ClientCredentials = { clientId: client.clientId, clientSecret: SECRET, basic };

    // Act
    const exchange = tokens.exchangeCode(withSecret, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

    // Assess
    await expectOAuthError(exchange, ClientAuthMethodError, 'invalid_client', 401);
    await expect(exchange).rejects.toMatchObject({ headers: basic ? { 'www-authenticate': 'Basic realm="oauth"' } : {} });
    expect(requests.operations).toEqual(['BatchGetItemCommand']);
    await expectNothingWritten(client.clientId, code);
  });

  it('refuses a confidential client without its secret as the endpoint answers missing credentials, writing nothing', async () => {
    // Prepare
    const { client, credentials, code } = await seedCode();
    const none = (missing: 'invalid_request' | 'invalid_client'): ClientCredentials => ({ clientId: client.clientId, basic: false, missing });

    // Act, Assess (each refusal awaited before the next request: none is left unhandled)
    await expectOAuthError(tokens.exchangeCode(none('invalid_request'), { code, redirectUri: REDIRECT_URI }), BadRequestError, 'invalid_request', 400);
    await expectOAuthError(revokeToken(none('invalid_client'), code), InvalidClientError, 'invalid_client', 401);
    await expectNothingWritten(client.clientId, code);
    // The client itself still gets its tokens.
    expect((await tokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })).token_type).toBe('Bearer');
  });

  it('refuses an unknown client without a secret as invalid_client', async () => {
    // Prepare
    const { client, code, verifier } = await seedPublicCode();

    // Act
    const exchange = tokens.exchangeCode({ clientId: `${client.clientId}-other`, basic: false, missing: 'invalid_request' }, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

    // Assess
    await expectOAuthError(exchange, InvalidClientError, 'invalid_client', 401);
    await expectNothingWritten(client.clientId, code);
  });

  it('refuses a public client\'s revocation with a secret, and leaves the family active', async () => {
    // Prepare
    const { client, none, code, verifier } = await seedPublicCode();
    const issued = await tokens.exchangeCode(none, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });

    // Act
    const revoke = revokeToken({ clientId: client.clientId, clientSecret: 'anything', basic: false }, issued.refresh_token);

    // Assess
    await expectOAuthError(revoke, ClientAuthMethodError, 'invalid_client', 401);
    expect(await familyStatus(grantTokenNames(issued.refresh_token)!.familyId)).toBe('active');
  });

  it('reads a public client with every grant even with a client cache: a deleted one is refused at once', async () => {
    // Prepare
    const cached = createTokenService({ grants, signer: Promise.resolve(signer), issuer: ISSUER, audience: AUDIENCE, now: () => current, clientCache: createClientCache() });
    const { client, none, code, verifier } = await seedPublicCode();
    const issued = await cached.exchangeCode(none, { code, redirectUri: REDIRECT_URI, codeVerifier: verifier });
    await doc.send(new DeleteCommand({ TableName: table, Key: clientKey(client.clientId) }));

    // Act
    const refresh = cached.refresh(none, { refreshToken: issued.refresh_token });

    // Assess: a confidential client presenting its current secret would be taken from the cache for 5 s.
    await expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401);
  });
});
