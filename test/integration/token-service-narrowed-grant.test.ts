import { describe, expect, it } from 'vitest';
import { editedConsent } from '#shared/domain/grant';
import { formatTimestamp } from '#shared/domain/time';
import {
  current, expectInvalidGrant, grants, REDIRECT_URI, seedCode, seedTokens, tokens, useTokenService, verifyAccessToken,
} from '../support/token-service';

// A grant narrowed on the account page: the user took scopes away, so the next
// refresh, and a code exchanged after the change, answer only the scopes the consent still holds;
// a grant left with none of the token's scopes gives nothing. Over DynamoDB Local.
describe('token service: a grant narrowed by its user', () => {
  useTokenService();

  /** Takes every scope but `kept` away from the user's consent to the client, as the grant page does. */
  async function narrow(userId: string, clientId: string, kept: string[]) {
    const consent = (await grants.getConsent(userId, clientId))!;
    expect(await grants.replaceConsent(editedConsent(consent, { scopes: kept, at: formatTimestamp(current) }), consent)).toBe(true);
  }

  it('a refresh answers the scopes the consent still holds, and its access token carries only those', async () => {
    const { credentials, stored, issued } = await seedTokens();
    expect(issued.scope).toBe('read_device write_device');
    await narrow(stored.userId, stored.clientId, ['read_device']);

    const refreshed = await tokens.refresh(credentials, { refreshToken: issued.refresh_token });

    expect(refreshed.scope).toBe('read_device');
    expect((await verifyAccessToken(refreshed.access_token)).payload.scope).toBe('read_device');
  });

  it('a refresh asking for a scope taken away is invalid_scope, and a grant left with none of the family\'s scopes is invalid_grant', async () => {
    const { credentials, stored, issued } = await seedTokens({ code: { scopes: ['write_device'] } });
    await grants.saveConsent({ ...(await grants.getConsent(stored.userId, stored.clientId))!, scopes: ['write_device', 'read_user'] });
    await narrow(stored.userId, stored.clientId, ['read_user']);

    await expectInvalidGrant(tokens.refresh(credentials, { refreshToken: issued.refresh_token }));
  });

  it('a code exchanged after the change answers only the scopes left; with none left, invalid_grant', async () => {
    const seeded = await seedCode();
    await narrow(seeded.stored.userId, seeded.stored.clientId, ['write_device']);

    const exchanged = await tokens.exchangeCode(seeded.credentials, { code: seeded.code, redirectUri: REDIRECT_URI });

    expect(exchanged.scope).toBe('write_device');
    const other = await seedCode({ code: { scopes: ['read_device'] } });
    await grants.saveConsent({ ...(await grants.getConsent(other.stored.userId, other.stored.clientId))!, scopes: ['read_device', 'read_user'] });
    await narrow(other.stored.userId, other.stored.clientId, ['read_user']);
    await expectInvalidGrant(tokens.exchangeCode(other.credentials, { code: other.code, redirectUri: REDIRECT_URI }));
  });
});
