import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { randomToken } from '#shared/secrets';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { REVOKED_GRANT_SECONDS } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { InvalidClientError } from '#shared/errors';
import {
  advance, clients, current, expectInvalidGrant, expectOAuthError, familyOf, familyStatus, grants, itemsOf, tokenClient,
  REDIRECT_URI, requests, SECRET, seedTokens, START, tokens, revokeToken, useTokenService,
} from '../support/token-service';

// Token revocation at the token service (revoke: RFC 7009) and how a grant ends, over DynamoDB Local;
// the set-up, factories and checks are test/support/token-service.ts.
describe('token service', () => {
  useTokenService();

  describe('revoke', () => {
    it('revokes the family of a refresh token: neither it nor its successors work afterwards', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const rotated = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Act
      await revokeToken(credentials, rotated.refresh_token);

      // Assess
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: rotated.refresh_token }));
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
    });

    it('revokes a current token with one UpdateItem of its family after the read, and gives the family a TTL of 30 days', async () => {
      // Prepare
      const { client, credentials, issued } = await seedTokens();

      // Act
      await revokeToken(credentials, issued.refresh_token);

      // Assess
      expect(requests.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      const items = await itemsOf(client.clientId);
      expect(items.families).toEqual([expect.objectContaining({ status: 'revoked', expiresAt: epochSeconds(current) + REVOKED_GRANT_SECONDS })]);
      expect(items.refreshTokens).toEqual([]);
    });

    it('revoking through a rotated token, however old, revokes the family, and the current token with it', async () => {
      // Prepare: first → second → third; the first's successor (second) is no longer current
      const { client, credentials, issued } = await seedTokens();
      const second = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      const third = await tokens.refresh(credentials, { refreshToken: second.refresh_token });
      advance(400 * 24 * 3600);

      // Act
      await revokeToken(credentials, issued.refresh_token);

      // Assess
      expect(await familyOf(third.refresh_token)).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(current) + REVOKED_GRANT_SECONDS });
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: third.refresh_token }));
      expect((await itemsOf(client.clientId)).families).toHaveLength(1);
    });

    it('accepts an access token or an unknown token and changes nothing', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      await revokeToken(credentials, issued.access_token);
      await revokeToken(credentials, randomToken());
      // A token of our shape naming the family under another user: no family of that user.
      await revokeToken(credentials, issued.refresh_token.replace(/^[^.]+/, randomUUID()));

      // Assess
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('answers invalid_client for a wrong secret and keeps the token usable', async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();

      // Act
      const revoke = revokeToken({ ...credentials, clientSecret: 'wrong' }, issued.refresh_token);

      // Assess
      await expectOAuthError(revoke, InvalidClientError, 'invalid_client', 401);
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it("leaves another client's refresh token alone", async () => {
      // Prepare
      const { credentials, issued } = await seedTokens();
      const other = tokenClient();
      await clients.createClient(other);

      // Act
      await revokeToken({ clientId: other.clientId, clientSecret: SECRET, basic: false }, issued.refresh_token);

      // Assess
      expect((await tokens.refresh(credentials, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });
  });

  describe('mutants that survived the suite', () => {
    it('revokeFamily is one UpdateItem, idempotent (the first TTL stays), and no error for a family that does not exist (nothing written)', async () => {
      // Prepare
      const { client, issued } = await seedTokens();
      const { familyId } = grantTokenNames(issued.refresh_token)!;
      const missing = randomUUID();

      // Act
      await grants.revokeFamily(familyId, current, 'token_revoked');
      const first = await familyOf(issued.refresh_token);
      advance(3600);
      await grants.revokeFamily(familyId, current, 'token_revoked');
      await grants.revokeFamily(missing, current, 'token_revoked');

      // Assess
      expect(requests.operations).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
      expect(first).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(START) + REVOKED_GRANT_SECONDS });
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', expiresAt: epochSeconds(START) + REVOKED_GRANT_SECONDS });
      expect(await familyStatus(missing)).toBeUndefined();
      expect((await itemsOf(client.clientId)).families).toHaveLength(1);
    });
  });

  describe('the single-item family, re-measured by mutation (2026-11-23)', () => {
    it("records why each grant ended, for the application's grant.revoked event", async () => {
      // A replayed code, a reused refresh token, RFC 7009, and a consent gone that the revocation's Query missed.
      const replayed = await seedTokens();
      await expectInvalidGrant(tokens.exchangeCode(replayed.credentials, { code: replayed.code, redirectUri: REDIRECT_URI }));
      const reused = await seedTokens();
      // Reuse: the first token again once its successor was used.
      const successor = await tokens.refresh(reused.credentials, { refreshToken: reused.issued.refresh_token });
      await tokens.refresh(reused.credentials, { refreshToken: successor.refresh_token });
      await expectInvalidGrant(tokens.refresh(reused.credentials, { refreshToken: reused.issued.refresh_token }));
      const revoked = await seedTokens();
      await revokeToken(revoked.credentials, revoked.issued.refresh_token);
      const abandoned = await seedTokens();
      await grants.deleteConsent(abandoned.stored.userId, abandoned.stored.clientId);
      await expectInvalidGrant(tokens.refresh(abandoned.credentials, { refreshToken: abandoned.issued.refresh_token }));

      const reasons = await Promise.all([replayed, reused, revoked, abandoned].map(async ({ issued }) => (await familyOf(issued.refresh_token))?.revokedReason));
      expect(reasons).toEqual(['code_replay', 'refresh_token_reuse', 'token_revoked', 'user_revoked']);
    });

    it('revoking a token of a family already revoked writes nothing, and keeps the first reason', async () => {
      const { credentials, issued } = await seedTokens();
      const successor = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      await tokens.refresh(credentials, { refreshToken: successor.refresh_token });
      await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
      requests.reset();

      await revokeToken(credentials, issued.refresh_token);

      expect(requests.operations).toEqual(['BatchGetItemCommand']);
      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'revoked', revokedReason: 'refresh_token_reuse' });
    });

    it('does not take a value with something in front of a refresh token for that token: revoking it leaves the family alone', async () => {
      const { credentials, issued } = await seedTokens();

      expect(grantTokenNames(`!${issued.refresh_token}`)).toBeUndefined();
      await revokeToken(credentials, `!${issued.refresh_token}`);

      expect(await familyOf(issued.refresh_token)).toMatchObject({ status: 'active' });
    });
  });
});
