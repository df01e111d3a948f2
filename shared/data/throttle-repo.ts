import type { RepoOperations } from '#shared/data/table-access';
import { TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import { createBatchReader, type BatchRead, type Item } from '#shared/data/batch-read';
import { isCancelled, isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { throttleKey } from '#shared/data/item-keys';

/** How long failed logins are remembered: a record lives this long after its last reservation (TTL). */
export const THROTTLE_MEMORY_SECONDS = 86_400;

/**
 * What a record counts attempts of: one account from one address, an account from anywhere, an
 * address for any account (the password's three), and the second-factor codes of one account.
 */
export type ThrottleScope = 'account-address' | 'account' | 'address' | 'second-factor';
/** The records a password attempt reserves on. */
export const THROTTLE_SCOPES: readonly ThrottleScope[] = ['account-address', 'account', 'address'];

/** One throttle record as read; an absent one (or one past its TTL) has no failures. */
export interface ThrottleRecord {
  scope: ThrottleScope;
  /** What the record is about: the normalized e-mail address, the source address, or both (`<email> <address>`). */
  subject: string;
  /** Attempts reserved and not given back by a successful login. */
  failures: number;
  /** Epoch milliseconds: the earliest next attempt once the free attempts are used up. */
  nextAttemptAt: number;
  /** `expired`: an item past its TTL that DynamoDB has not deleted yet, which counts as absent. */
  stored: 'none' | 'live' | 'expired';
}

/** One more failure to reserve on a record as it was read, and when the attempt after it may come. */
export interface Reservation {
  record: ThrottleRecord;
  freeAttempts: number;
  nextAttemptAt: number;
}

/** The outcome of `reserve`: done, or refused with the records as they now are (for `Retry-After`). */
export type ReserveOutcome = { reserved: true } | { reserved: false; current: ThrottleRecord[] };

export type ThrottleRepo = ReturnType<typeof createThrottleRepo>;

/** The number attributes of an item a cancelled transaction returns (in DynamoDB's own JSON: `{ N: '3' }`). */
const numbersOf = (item: Record<string, unknown>): Item => Object.fromEntries(Object.entries(item).map(([name, value]) =>
  // Stryker disable next-line LogicalOperator,ConditionalExpression: such an item is DynamoDB JSON (every value an object), and toRecord reads only its numbers
  [name, typeof value === 'object' && value !== null && 'N' in value ? Number((value as { N: string }).N) : value]));

type CancellationReason = { Code?: string; Item?: Record<string, unknown> };

/**
 * Why a reservation's write was refused, as a transaction's cancellation reasons (one per item);
 * a single UpdateItem's refusal (its condition, or a concurrent transaction on its item) reads as a
 * transaction of one item would. Undefined for any other error.
 */
function cancellationReasonsOf(error: unknown): CancellationReason[] | undefined {
  if (isCancelled(error)) return (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
  if (isConditionalCheckFailed(error)) return [{ Code: 'ConditionalCheckFailed', Item: (error as { Item?: Record<string, unknown> }).Item }];
  if (error instanceof Error && error.name === 'TransactionConflictException') return [{ Code: 'TransactionConflict' }];
  return undefined;
}

const subjectOf = (scope: ThrottleScope, account: string, address: string) =>
  scope === 'account' ? account : scope === 'address' ? address : `${account} ${address}`;

/**
 * Login throttle records, per account and source address, per account and per address, in TTL items
 * that forget a day after the last attempt (known browsers: known-browser-repo.ts). DynamoDB deletes
 * late, so an item past its TTL counts as absent: a record is started again from one.
 */
export function createThrottleRepo({ doc, table }: RepoDeps) {
  const batch = createBatchReader({ doc, table });
  const seconds = (ms: number) => Math.floor(ms / 1000);

  /**
   * The transaction item that gives one reservation back to a record: one failure off, and its wait
   * ends (it was over when the attempt reserved); a record that has gone keeps its memory of a day.
   */
  const creditItem = (scope: ThrottleScope, subject: string, now: number): TransactItem => ({
    Update: {
      TableName: table,
      Key: throttleKey(scope, subject),
      UpdateExpression: 'ADD failures :minusOne SET nextAttemptAt = :now, expiresAt = if_not_exists(expiresAt, :expires)',
      ExpressionAttributeValues: { ':minusOne': -1, ':now': now, ':expires': seconds(now) + THROTTLE_MEMORY_SECONDS },
    },
  });

  function toRecord(scope: ThrottleScope, subject: string, item: Item | undefined, now: number): ThrottleRecord {
    if (!item) return { scope, subject, failures: 0, nextAttemptAt: 0, stored: 'none' };
    if (!(Number(item.expiresAt) > seconds(now))) return { scope, subject, failures: 0, nextAttemptAt: 0, stored: 'expired' };
    return { scope, subject, failures: Number(item.failures ?? 0), nextAttemptAt: Number(item.nextAttemptAt ?? 0), stored: 'live' };
  }

  /**
   * One more failure on a record, if its state still allows it: the write a login makes before it
   * checks the password. Below the free attempts any live count will do (the count is what limits
   * them); from there on the count must be the one read (so `nextAttemptAt`, computed from it, is
   * exact) and its wait over. A record read past its TTL is started again at one, if still expired.
   */
  function reservationItem({ record, freeAttempts, nextAttemptAt }: Reservation, now: number): TransactItem {
    const common = {
      TableName: table,
      Key: throttleKey(record.scope, record.subject),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    const set = { ':one': 1, ':next': nextAttemptAt, ':expires': seconds(now) + THROTTLE_MEMORY_SECONDS, ':nowSeconds': seconds(now) };
    if (record.stored === 'expired') {
      return {
        Update: {
          ...common,
          UpdateExpression: 'SET failures = :one, nextAttemptAt = :next, expiresAt = :expires',
          ConditionExpression: 'expiresAt <= :nowSeconds',
          ExpressionAttributeValues: set,
        },
      };
    }
    return {
      Update: {
        ...common,
        UpdateExpression: 'ADD failures :one SET nextAttemptAt = :next, expiresAt = :expires',
        ConditionExpression: 'attribute_not_exists(failures) OR (expiresAt > :nowSeconds AND (failures < :free OR '
          + '(failures = :seen AND (attribute_not_exists(nextAttemptAt) OR nextAttemptAt <= :now))))',
        ExpressionAttributeValues: { ...set, ':free': freeAttempts, ':seen': record.failures, ':now': now },
      },
    };
  }

  return {
    /** The three records of a login attempt, as part of a combined read (absent ones with no failures). `now` in epoch milliseconds. */
    recordsRead(account: string, address: string, now: number): BatchRead<ThrottleRecord[]> {
      return {
        keys: THROTTLE_SCOPES.map((scope) => throttleKey(scope, subjectOf(scope, account, address))),
        parse: (items) => THROTTLE_SCOPES.map((scope, i) => toRecord(scope, subjectOf(scope, account, address), items[i], now)),
      };
    },

    /** The three records in one BatchGetItem. */
    async getRecords(account: string, address: string, now = Date.now()): Promise<ThrottleRecord[]> {
      const [records] = await batch.read([this.recordsRead(account, address, now)]);
      return records;
    },

    /**
     * Reserves one failure on each record, all or none: a refused reservation writes nothing. The
     * password's three records in one TransactWriteItems; a single record (a second factor's, a
     * passkey sign-in's address) in one conditional UpdateItem, which costs half the write units of
     * a transaction of one item. A write that only collided with a concurrent transaction on the
     * same items (DynamoDB cancels both) is sent once more before it counts as refused.
     */
    async reserve(reservations: readonly Reservation[], now: number): Promise<ReserveOutcome> {
      const TransactItems = reservations.map((reservation) => reservationItem(reservation, now));
      const send = TransactItems.length === 1
        ? () => doc.send(new UpdateCommand(TransactItems[0]!.Update!))
        : () => doc.send(new TransactWriteCommand({ TransactItems }));
      // Stryker disable next-line UpdateOperator: only `attempt === 0` is asked, which counting down answers the same
      for (let attempt = 0; ; attempt++) {
        try {
          await send();
          return { reserved: true };
        } catch (error) {
          const reasons = cancellationReasonsOf(error);
          if (!reasons) throw error;
          const refused = reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
          if (!refused && attempt === 0 && reasons.some((reason) => reason.Code === 'TransactionConflict')) continue;
          const current = reservations.map(({ record }, i) => {
            // DynamoDB returns the item (ReturnValuesOnConditionCheckFailure) only for a failed condition.
            const found = reasons[i]?.Item;
            return found ? toRecord(record.scope, record.subject, numbersOf(found), now) : record;
          });
          return { reserved: false, current };
        }
      }
    },

    /**
     * The transaction items that give a successful login's reservations back: the record of the
     * account from this address is deleted (its owner signed in from there), the account's and the
     * address's take one failure off, and their wait ends (it was over when the login reserved).
     */
    creditItems(account: string, address: string, now: number): TransactItem[] {
      const credit = (scope: ThrottleScope) => creditItem(scope, subjectOf(scope, account, address), now);
      return [
        // Stryker disable next-line StringLiteral: subjectOf gives the pair's subject for any scope but the two others
        { Delete: { TableName: table, Key: throttleKey('account-address', subjectOf('account-address', account, address)) } },
        credit('account'),
        credit('address'),
      ];
    },

    /**
     * Gives a confirmed password's reservation back, as a successful login does (creditItems), for a
     * password asked again while signed in (shared/accounts/confirm-identity.ts): one TransactWriteItems.
     */
    async credit(account: string, address: string, now: number): Promise<void> {
      await doc.send(new TransactWriteCommand({ TransactItems: this.creditItems(account, address, now) }));
    },

    /** The record of one source address (the passkey sign-in's), as part of a combined read. `now` in epoch milliseconds. */
    addressRecordRead(address: string, now: number): BatchRead<ThrottleRecord> {
      return { keys: [throttleKey('address', address)], parse: ([item]) => toRecord('address', address, item, now) };
    },

    /** The transaction item that gives a successful passkey sign-in's reservation back to its address's record. */
    addressCreditItem(address: string, now: number): TransactItem {
      return creditItem('address', address, now);
    },

    /** The second-factor record of an account (its user id), as part of a combined read. `now` in epoch milliseconds. */
    secondFactorRecordRead(userId: string, now: number): BatchRead<ThrottleRecord> {
      return { keys: [throttleKey('second-factor', userId)], parse: ([item]) => toRecord('second-factor', userId, item, now) };
    },

    /**
     * The transaction item that gives a successful second factor's reservation back: one failure off
     * the account's second-factor record, and its wait ends (it was over when the attempt reserved).
     */
    secondFactorCreditItem(userId: string, now: number): TransactItem {
      return creditItem('second-factor', userId, now);
    },

  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const THROTTLE_REPO_OPERATIONS = {
  recordsRead: { actions: ['BatchGetItem'] },
  getRecords: { actions: ['BatchGetItem'] },
  reserve: { actions: ['UpdateItem'] },
  creditItems: { actions: ['UpdateItem', 'DeleteItem'] },
  credit: { actions: ['UpdateItem', 'DeleteItem'] },
  addressRecordRead: { actions: ['BatchGetItem'] },
  addressCreditItem: { actions: ['UpdateItem'] },
  secondFactorRecordRead: { actions: ['BatchGetItem'] },
  secondFactorCreditItem: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<ThrottleRepo>;
