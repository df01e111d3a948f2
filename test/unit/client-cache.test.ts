import { describe, expect, it } from 'vitest';
import { CLIENT_CACHE_SECONDS, createClientCache } from '#shared/oauth/client-cache';
import { hashSecret } from '#shared/secrets';
import type { Client } from '#shared/domain/client';

// The token endpoint's cache of client items (shared/oauth/client-cache.ts) on its own, on the test's
// clock; what the token service lets through with it is test/integration/token-client-cache.test.ts.

const REDIRECT_URI = 'https://app.example.test/callback';
const SECRET = 'client-secret-that-is-long-enough-0123456789abcdef';
const NEW_SECRET = 'the-secret-after-a-rotation-0123456789abcdefghijk';

describe('client cache', () => {
  const client = (clientId: string, secret = SECRET): Client => ({
    clientId, secretHash: hashSecret(secret), name: 'A', description: 'B', website: 'https://a.example', redirectUris: [REDIRECT_URI],
    developerId: 'd', developerName: 'D', createdAt: '2026-01-01T00:00:00.000',
  });

  it('answers only for the current secret, until the item is CLIENT_CACHE_SECONDS old', () => {
    let now = 0;
    const cache = createClientCache({ now: () => now });
    cache.remember(client('a'));

    const matching = cache.withCurrentSecret('a', hashSecret(SECRET));
    const other = cache.withCurrentSecret('a', hashSecret(NEW_SECRET));
    const unknown = cache.withCurrentSecret('b', hashSecret(SECRET));
    now = CLIENT_CACHE_SECONDS * 1000 - 1;
    const lastMoment = cache.withCurrentSecret('a', hashSecret(SECRET));
    now += 1;
    const expired = cache.withCurrentSecret('a', hashSecret(SECRET));

    expect([matching?.clientId, other, unknown, lastMoment?.clientId, expired]).toEqual(['a', undefined, undefined, 'a', undefined]);
  });

  it('never answers for a public client, which has no secret: its item is read with every grant', () => {
    const cache = createClientCache({ now: () => 0 });
    const { secretHash: _, ...withoutSecret } = client('p');
    cache.remember({ ...withoutSecret, clientType: 'public' });

    expect(cache.withCurrentSecret('p', hashSecret(''))).toBeUndefined();
    expect(cache.withCurrentSecret('p', 'undefined')).toBeUndefined();
    expect(cache.withCurrentSecret('p', hashSecret(SECRET))).toBeUndefined();
  });

  it('keeps at most maxEntries items, dropping the oldest; a remembered item replaces the one before and forget drops it', () => {
    const cache = createClientCache({ now: () => 0, maxEntries: 2 });
    cache.remember(client('a'));
    cache.remember(client('b'));
    cache.remember(client('a', NEW_SECRET));
    cache.remember(client('c'));
    const held = ['a', 'b', 'c'].map((id) => cache.withCurrentSecret(id, hashSecret(id === 'a' ? NEW_SECRET : SECRET))?.clientId);
    cache.forget('c');

    expect(held).toEqual(['a', undefined, 'c']);
    expect(cache.withCurrentSecret('a', hashSecret(SECRET))).toBeUndefined();
    expect(cache.withCurrentSecret('c', hashSecret(SECRET))).toBeUndefined();
  });

  it('replaces a full cache\'s item without evicting another', () => {
    const cache = createClientCache({ now: () => 0, maxEntries: 2 });
    cache.remember(client('a'));
    cache.remember(client('b'));
    cache.remember(client('b', NEW_SECRET));

    expect(cache.withCurrentSecret('a', hashSecret(SECRET))?.clientId).toBe('a');
    expect(cache.withCurrentSecret('b', hashSecret(NEW_SECRET))?.clientId).toBe('b');
  });
});
