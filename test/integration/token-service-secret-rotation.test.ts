import { describe, expect, it } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { PREVIOUS_SECRET_OVERLAP_SECONDS } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { InvalidClientError } from '#shared/errors';
import {
  advance, clients, expectNothingWritten, expectOAuthError, REDIRECT_URI, SECRET, seedCode, seedTokens, START, tokens,
  revokeToken, useTokenService,
} from '../support/token-service';

// A client's previous secret after a rotation, at the token service's grants and revocation, over
// DynamoDB Local; the set-up, factories and checks are test/support/token-service.ts.
describe('token service', () => {
  useTokenService();

  describe('a previous client secret, after a rotation', () => {
    const CURRENT = 'the-current-secret-after-rotation-0123456789abcdef';
    /** Tokens of a client rotated at START: its current secret is CURRENT, the previous one SECRET (the credentials'). */
    const seedRotated = () =>
      seedTokens({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });

    it(`is accepted by the token and revocation operations until ${PREVIOUS_SECRET_OVERLAP_SECONDS} s (7 days) after the rotation, then is invalid_client`, async () => {
      // Prepare
      const { credentials, issued } = await seedRotated();
      const current = { ...credentials, clientSecret: CURRENT };
      advance(PREVIOUS_SECRET_OVERLAP_SECONDS - 1);

      // Act
      const lastSecond = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });
      await revokeToken(credentials, randomToken());
      advance(1);
      const refresh = tokens.refresh(credentials, { refreshToken: lastSecond.refresh_token });
      const revoke = revokeToken(credentials, lastSecond.refresh_token);

      // Assess
      expect(PREVIOUS_SECRET_OVERLAP_SECONDS).toBe(7 * 24 * 3600);
      // Both awaited together: a rejection of the second before the first is checked would be unhandled.
      await Promise.all([
        expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401),
        expectOAuthError(revoke, InvalidClientError, 'invalid_client', 401),
      ]);
      expect((await tokens.refresh(current, { refreshToken: lastSecond.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('is refused at once when retired, while the current secret works', async () => {
      // Prepare
      const { client, credentials, issued } = await seedRotated();

      // Act
      await clients.retirePreviousSecret(client.developerId, client.clientId);
      const refresh = tokens.refresh(credentials, { refreshToken: issued.refresh_token });

      // Assess
      await expectOAuthError(refresh, InvalidClientError, 'invalid_client', 401);
      expect((await tokens.refresh({ ...credentials, clientSecret: CURRENT }, { refreshToken: issued.refresh_token })).refresh_token).toEqual(expect.any(String));
    });

    it('exchanges a code with either secret, and neither opens the door to a wrong one', async () => {
      // Prepare
      const first = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });
      const second = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });
      const third = await seedCode({ client: { secretHash: hashSecret(CURRENT), previousSecretHash: hashSecret(SECRET), secretCreatedAt: formatTimestamp(START) } });

      // Act
      const withPrevious = await tokens.exchangeCode({ ...first.credentials, basic: true }, { code: first.code, redirectUri: REDIRECT_URI });
      const withCurrent = await tokens.exchangeCode({ ...second.credentials, clientSecret: CURRENT }, { code: second.code, redirectUri: REDIRECT_URI });
      const wrong = tokens.exchangeCode({ ...third.credentials, clientSecret: 'no-such-client' }, { code: third.code, redirectUri: REDIRECT_URI });

      // Assess
      expect(withPrevious.refresh_token).toEqual(expect.any(String));
      expect(withCurrent.refresh_token).toEqual(expect.any(String));
      await expectOAuthError(wrong, InvalidClientError, 'invalid_client', 401);
      await expectNothingWritten(third.client.clientId, third.code);
    });
  });
});
