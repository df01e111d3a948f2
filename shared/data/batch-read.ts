import { BatchGetCommand } from '#shared/data/commands';
import type { RepoDeps } from '#shared/data/dynamodb';

export type ItemKey = { pk: string; sk: string };
export type Item = Record<string, unknown>;

/**
 * One repository's part of a combined read: the keys it needs and how it turns the items found
 * (aligned with its keys, undefined where absent) into its answer. Repositories describe reads;
 * `createBatchReader` sends the reads of several repositories as one BatchGetItem, which is how a
 * page that needs a session, a user, a client and a consent pays for one request instead of four.
 */
export interface BatchRead<T> {
  keys: readonly ItemKey[];
  parse(items: readonly (Item | undefined)[]): T;
}

type Answers<R extends readonly BatchRead<unknown>[]> = { -readonly [K in keyof R]: R[K] extends BatchRead<infer T> ? T : never };

/** BatchGetItem takes at most 100 keys per request. */
const MAX_KEYS = 100;

export type BatchReader = ReturnType<typeof createBatchReader>;

export function createBatchReader({ doc, table }: RepoDeps) {
  /**
   * Items by key, strongly consistent, aligned with `keys`: one BatchGetItem per 100 distinct keys,
   * none for no keys. Unprocessed keys (throttling) are retried with backoff rather than reported missing.
   */
  async function getItems(keys: readonly ItemKey[]): Promise<(Item | undefined)[]> {
    const unique = [...new Map(keys.map((key) => [`${key.pk}\u0000${key.sk}`, key])).values()];
    const found: Item[] = [];
    for (let start = 0; start < unique.length; start += MAX_KEYS) {
      let pending: Item[] = unique.slice(start, start + MAX_KEYS);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 5) throw new Error('BatchGetItem kept returning unprocessed keys');
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
        const { Responses, UnprocessedKeys } = await doc.send(new BatchGetCommand({
          RequestItems: { [table]: { Keys: pending, ConsistentRead: true } },
        }));
        found.push(...(Responses?.[table] ?? []));
        pending = UnprocessedKeys?.[table]?.Keys ?? [];
      }
    }
    return keys.map((key) => found.find((item) => item.pk === key.pk && item.sk === key.sk));
  }

  return {
    getItems,

    /** Answers several repositories' reads with one BatchGetItem (none when they need no key). */
    async read<const R extends readonly BatchRead<unknown>[]>(reads: R): Promise<Answers<R>> {
      const all = allOf(reads);
      return all.parse(await getItems(all.keys));
    },
  };
}

/** Several reads as one, whose answer is theirs in order: for a caller that takes a single read (a page's `ofUser`). */
export function allOf<const R extends readonly BatchRead<unknown>[]>(reads: R): BatchRead<Answers<R>> {
  return {
    keys: reads.flatMap((r) => r.keys),
    parse: (items) => {
      let offset = 0;
      return reads.map((r) => {
        const own = items.slice(offset, offset + r.keys.length);
        offset += r.keys.length;
        return r.parse(own);
      }) as Answers<R>;
    },
  };
}
