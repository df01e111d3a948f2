import type { RepoOperations } from '#shared/data/table-access';
import { GetCommand, PutCommand } from '#shared/data/commands';
import type { PublicJwk } from '#shared/domain/jwk';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { signingKeysKey } from '#shared/data/item-keys';

/** One signing key and its schedule. Times are epoch seconds; its phase follows from them (shared/keys/schedule.ts). */
export interface SigningKeyEntry {
  /** The JWT header's `kid`: the KMS key id, or the local key's RFC 7638 thumbprint. */
  kid: string;
  /** Where the key lives: the KMS key ARN, or the local key file's name. */
  ref: string;
  createdAt: number;
  /** From then on it signs (until a later key's `activateAt`); published from `createdAt`. */
  activateAt: number;
  /** Set when its successor is introduced: from then on it is no longer published. */
  retireAt?: number;
  /**
   * Its public key, read once by the rotation when it published the key, so that the JWKS serves the
   * keys without a KMS call. Absent only in schedules written before it was kept (the JWKS then asks KMS).
   */
  jwk?: PublicJwk;
}

/**
 * A key a rotation created whose public key KMS did not give yet (a new key's permissions may take
 * minutes to apply): not published, never signs. A later step publishes it once its public key is
 * readable, or a teardown deletes it; it is listed here so that nothing is left behind.
 */
export interface UnpublishedKey {
  kid: string;
  ref: string;
  createdAt: number;
}

/** What a rotation writes. */
export interface SigningKeyScheduleState {
  keys: SigningKeyEntry[];
  /** Created, not published yet (at most one). */
  unpublished?: UnpublishedKey[];
  /** Set by the teardown (the stack is being deleted): no step creates or publishes a key after it. */
  closedAt?: number;
}

export interface SigningKeySchedule extends SigningKeyScheduleState {
  /** Optimistic lock: each write increments it, and only over the version it read. */
  version: number;
}

export class KeyScheduleConflictError extends Error {
  constructor() {
    super('The signing-key schedule was changed by another rotation meanwhile; run it again.');
    this.name = 'KeyScheduleConflictError';
  }
}

export type SigningKeyRepo = ReturnType<typeof createSigningKeyRepo>;

/**
 * The signing-key schedule: one small item (`SIGNING#KEYS`), read by the token endpoint (which key
 * signs) and the JWKS (which keys are published), written only by a rotation. It lives forever and
 * stays small: a rotation drops the keys that are retired.
 */
export function createSigningKeyRepo({ doc, table }: RepoDeps) {
  return {
    /**
     * The schedule, or undefined before the first rotation (then the deployed key alone signs). One
     * GetItem: eventually consistent for the readers (a change is hours ahead of its effect), strongly
     * for a rotation, which writes over what it read.
     */
    async getSchedule(consistent = false): Promise<SigningKeySchedule | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: signingKeysKey(), ConsistentRead: consistent }));
      if (!Item) return undefined;
      return {
        keys: Item.keys as SigningKeyEntry[],
        ...(Item.unpublished === undefined ? {} : { unpublished: Item.unpublished as UnpublishedKey[] }),
        ...(Item.closedAt === undefined ? {} : { closedAt: Number(Item.closedAt) }),
        version: Number(Item.version),
      };
    },

    /** Writes the schedule over the version read (0: none yet). One PutItem; a concurrent rotation makes it fail. */
    async saveSchedule(state: SigningKeyScheduleState, readVersion: number): Promise<void> {
      const { keys, unpublished = [], closedAt } = state;
      try {
        await doc.send(new PutCommand({
          TableName: table,
          Item: {
            ...signingKeysKey(), keys, version: readVersion + 1,
            ...(unpublished.length > 0 ? { unpublished } : {}),
            ...(closedAt === undefined ? {} : { closedAt }),
          },
          ConditionExpression: readVersion === 0 ? 'attribute_not_exists(pk)' : 'version = :read',
          ...(readVersion === 0 ? {} : { ExpressionAttributeValues: { ':read': readVersion } }),
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new KeyScheduleConflictError();
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const SIGNING_KEY_REPO_OPERATIONS = {
  getSchedule: { actions: ['GetItem'] },
  saveSchedule: { actions: ['PutItem'] },
} as const satisfies RepoOperations<SigningKeyRepo>;
