import { randomUUID } from 'node:crypto';
import { importJWK, jwtVerify } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createKmsSigner } from '#shared/keys/kms-signer';
import { hashSecret } from '#shared/secrets';
import { SigningUnavailableError, type TokenSigner } from '#shared/keys/signer';
import { tokenEndpoint } from '#shared/oauth/token-endpoint';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { createTokenService, type TokenService } from '#shared/oauth/token-service';
import { AppError, InvalidGrantError } from '#shared/errors';
import { toAppError } from '#shared/http/http';
import { lambdaContext } from '#local/lambda-context';
import { createFakeKms } from '../support/fake-kms';
import {
  advance, AUDIENCE, current, expectNothingWritten, familyOf, grants, ISSUER, itemsOf, REDIRECT_URI, requests, SECRET, seedCode,
  seedTokens, useTokenService,
} from '../support/token-service';

// The token service and the token endpoint when kms:Sign is throttled or denied, over a KMS stand-in
// and DynamoDB Local; the set-up, factories and checks are test/support/token-service.ts.
describe('token service', () => {
  useTokenService();

  describe('when kms:Sign fails', () => {
    // The token service as in AWS: createKmsSigner over a KMS stand-in that signs for real and can
    // be told to throttle (or deny) the next kms:Sign calls.
    let fake: ReturnType<typeof createFakeKms>;
    let kmsSigner: TokenSigner;
    let kmsTokens: TokenService;
    let endpoint: ReturnType<typeof tokenEndpoint>;

    beforeAll(() => {
      fake = createFakeKms();
      kmsSigner = createKmsSigner(fake.kms, 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
      kmsTokens = createTokenService({
        grants, signer: Promise.resolve(kmsSigner), issuer: ISSUER, audience: AUDIENCE, now: () => current,
      });
      endpoint = tokenEndpoint(kmsTokens);
    });
    beforeEach(() => {
      fake.failSign(0);
    });

    const failure = (promise: Promise<unknown>) => promise.then(() => {
      throw new Error('expected the call to fail');
    }, (error: unknown) => error);

    async function verifyKmsToken(token: string) {
      const key = await importJWK(await kmsSigner.publicJwk(), 'RS256');
      return jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt', currentDate: current });
    }


    /** The token endpoint's answer to a form, invoked as Lambda invokes it. */
    async function post(fields: Record<string, string>) {
      const result = await endpoint({
        version: '2.0',
        routeKey: 'POST /oauth/token',
        rawPath: '/oauth/token',
        rawQueryString: '',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        requestContext: {
          accountId: '123456789012', apiId: 'auth', domainName: 'auth.example.test', domainPrefix: 'auth',
          http: { method: 'POST', path: '/oauth/token', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
          requestId: randomUUID(), routeKey: 'POST /oauth/token', stage: '$default', time: '01/Mar/2026:10:00:00 +0000', timeEpoch: 0,
        },
        body: new URLSearchParams(fields).toString(),
        isBase64Encoded: false,
      }, lambdaContext('post-token', randomUUID()));
      return { status: result.statusCode, headers: result.headers, body: JSON.parse(String(result.body)) as Record<string, unknown> };
    }

    it('answers a throttled code exchange with 503, writes nothing, and exchanges the same code on retry', async () => {
      // Prepare
      const { client, credentials, code, stored } = await seedCode();
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      expect(toAppError(error)).toMatchObject({ status: 503, code: 'temporarily_unavailable', headers: { 'retry-after': '1' } });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      await expectNothingWritten(client.clientId, code);

      const retry = await kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });
      expect((await verifyKmsToken(retry.access_token)).payload).toMatchObject({ sub: stored.userId, client_id: client.clientId });
      const items = await itemsOf(client.clientId);
      expect(items.families).toHaveLength(1);
      expect(items.families[0]).toMatchObject({ status: 'active', activeTokenHash: hashSecret(retry.refresh_token) });
      expect(items.families[0]!.familyId).toBe(grantTokenNames(code)!.familyId);
      expect((await kmsTokens.refresh(credentials, { refreshToken: retry.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers a throttled refresh with 503, leaves the token unrotated, and rotates the same token on a later retry', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      expect(toAppError(error)).toMatchObject({ status: 503, code: 'temporarily_unavailable' });
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      const family = await familyOf(issued.refresh_token);
      expect(family).toMatchObject({ status: 'active', activeTokenHash: hashSecret(issued.refresh_token) });
      expect(family?.previousTokenHash).toBeUndefined();

      // A retry an hour later rotates the token itself: nothing had rotated it (a retry of a rotated
      // token would get its stored successor instead, without a write).
      advance(3600);
      const retry = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      expect(retry.refresh_token).not.toBe(issued.refresh_token);
      await verifyKmsToken(retry.access_token);
      const items = await itemsOf(client.clientId);
      expect(items.families.map((f) => f.status)).toEqual(['active']);
      expect(items.families[0]).toMatchObject({ activeTokenHash: hashSecret(retry.refresh_token), previousTokenHash: hashSecret(issued.refresh_token) });
      expect((await kmsTokens.refresh(credentials, { refreshToken: retry.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers a throttled retry of the previous token with 503 and gives the next retry the same successor', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();
      const rotated = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      advance(1);
      fake.failSign(1);

      // Act
      const error = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));

      // Assess
      expect(error).toBeInstanceOf(SigningUnavailableError);
      const retry = await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token });
      expect(retry.refresh_token).toBe(rotated.refresh_token);
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['active']);
    });

    it('answers a denied kms:Sign with a 500 and spends neither the code nor the refresh token', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();
      fake.failSign(1, 'AccessDeniedException');

      // Act
      const error = await failure(kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI }));

      // Assess
      expect(error).not.toBeInstanceOf(AppError);
      expect(error).toMatchObject({ cause: { name: 'AccessDeniedException' } });
      expect(toAppError(error)).toMatchObject({ status: 500, code: 'server_error' });
      await expectNothingWritten(client.clientId, code);
      const issued = await kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI });

      fake.failSign(1, 'DisabledException');
      const refreshError = await failure(kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token }));
      expect(toAppError(refreshError)).toMatchObject({ status: 500, code: 'server_error' });
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active', activeTokenHash: hashSecret(issued.refresh_token) });
      advance(3600);
      expect((await kmsTokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['active']);
    });

    it('lets exactly one of 20 simultaneous exchanges of a code win, and the replays revoke its grant', async () => {
      // Prepare
      const { client, credentials, code } = await seedCode();

      // Act
      const results = await Promise.allSettled(Array.from({ length: 20 }, () =>
        kmsTokens.exchangeCode(credentials, { code, redirectUri: REDIRECT_URI })));

      // Assess
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      expect(fulfilled).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(InvalidGrantError);
      // The losers' replays revoke what the winner got (RFC 6749 §4.1.2), as without KMS.
      expect((await itemsOf(client.clientId)).families.map((f) => f.status)).toEqual(['revoked']);
    });

    describe('the token endpoint', () => {
      it('answers 503 temporarily_unavailable with Retry-After and no-store, and the same code works on retry', async () => {
        // Prepare
        const { client, code } = await seedCode();
        const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1);

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(503);
        expect(reply.body).toEqual({ error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; retry later.' });
        expect(reply.headers).toMatchObject({
          'retry-after': '1', 'cache-control': 'no-store', pragma: 'no-cache', 'content-type': 'application/json; charset=utf-8',
        });
        const retry = await post(form);
        expect(retry.status).toBe(200);
        expect(retry.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
      });

      it('answers 503 for a throttled refresh, and the same refresh token works on retry', async () => {
        // Prepare
        const { client, issued } = await seedTokens();
        const form = { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1);

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(503);
        expect(reply.body.error).toBe('temporarily_unavailable');
        expect(reply.headers).toMatchObject({ 'retry-after': '1', 'cache-control': 'no-store' });
        advance(3600);
        expect((await post(form)).status).toBe(200);
      });

      it('answers a denied kms:Sign with 500 server_error and nothing of KMS in the body', async () => {
        // Prepare
        const { client, code } = await seedCode();
        const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: SECRET };
        fake.failSign(1, 'AccessDeniedException');

        // Act
        const reply = await post(form);

        // Assess
        expect(reply.status).toBe(500);
        expect(reply.body).toEqual({ error: 'server_error', error_description: 'An unexpected error occurred.' });
        expect(reply.headers['cache-control']).toBe('no-store');
        expect(reply.headers['retry-after']).toBeUndefined();
        expect((await post(form)).status).toBe(200);
      });
    });
  });
});
