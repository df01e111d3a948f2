import { safeEqual } from '#shared/secrets';
import type { Client } from '#shared/domain/client';

/**
 * How long the token endpoint trusts a client item it read (docs/design.md, "Client items at the
 * token endpoint"): the longest a secret that stopped being current can still authenticate there.
 */
export const CLIENT_CACHE_SECONDS = 5;
/** Items kept per instance at most (the oldest goes first): a bound on memory, far above one instance's clients. */
export const CLIENT_CACHE_ENTRIES = 1000;

export type ClientCache = ReturnType<typeof createClientCache>;

/**
 * The client items a warm instance of the token endpoint read in the last CLIENT_CACHE_SECONDS. An
 * item is used instead of a read only for a caller that presents its *current* secret: a previous
 * secret, a wrong one, an unknown client or a stale item mean the client is read with the grant,
 * as without a cache, and the item read replaces the cached one. So retiring a previous secret
 * takes effect at once, and a new secret works at once; only a secret that was current less than
 * CLIENT_CACHE_SECONDS ago (rotated, or its application deleted) can still authenticate on an
 * instance that read it before the change, and its grants are still checked against the fresh
 * consent and family.
 */
export function createClientCache(options: { now?: () => number; ttlSeconds?: number; maxEntries?: number } = {}) {
  const now = options.now ?? Date.now;
  const ttlMs = (options.ttlSeconds ?? CLIENT_CACHE_SECONDS) * 1000;
  const maxEntries = options.maxEntries ?? CLIENT_CACHE_ENTRIES;
  const entries = new Map<string, { client: Client; until: number }>();
  return {
    /** The cached item of `clientId` if it is fresh and `secretHash` is its current secret's hash (constant-time comparison). */
    withCurrentSecret(clientId: string, secretHash: string): Client | undefined {
      // An expired item stays until replaced or evicted: the oldest go first, and no read answers with one.
      const entry = entries.get(clientId);
      if (!entry || entry.until <= now()) return undefined;
      // A public client has no secret: its item is never used instead of a read.
      return entry.client.secretHash !== undefined && safeEqual(secretHash, entry.client.secretHash) ? entry.client : undefined;
    },
    /** Keeps an item just read (strongly consistent) for CLIENT_CACHE_SECONDS, as the newest (replacing one evicts no other). */
    remember(client: Client): void {
      entries.delete(client.clientId);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(client.clientId, { client, until: now() + ttlMs });
    },
    /** Forgets a client that a read found missing (deleted). */
    forget(clientId: string): void {
      entries.delete(clientId);
    },
  };
}
