import type { RepoOperations } from '#shared/data/table-access';
import { TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DeviceAuthorization, DeviceCodeItem, UserCode } from '#shared/domain/device-authorization';
import type { Consent } from '#shared/domain/grant';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { consentPutItem, consentStandsCheck } from '#shared/data/consent-repo';
import { createUserCodeOperations } from '#shared/data/user-code-repo';
import { familiesOfClientIndexKey, familyKey, fromItem, pendingDeviceIndexKey, userCodeKey } from '#shared/data/item-keys';

/** What one poll found: the item as the poll left it, or, when the poll was refused, as it was (absent: no such item). */
export type PollOutcome = { polled: boolean; item: DeviceCodeItem | undefined };

/** Why a redemption or decision lost: the item was no longer in the state read, or the consent changed. */
export type DeviceWriteOutcome = 'done' | 'not_pending' | 'consent_changed';

/**
 * How early a poll may come before its interval has passed and still count as on time: the device
 * waits `interval` seconds after an answer, and the network's jitter may bring its next request a
 * little before the interval, measured here from when the last poll was written.
 */
export const POLL_LEEWAY_MS = 1000;

export type DeviceGrantRepo = ReturnType<typeof createDeviceGrantRepo>;

/**
 * The device authorization grant's items (RFC 8628): the device authorization, first state of its
 * token family's item (familyKey), and its user code's item. Every change is one conditional write,
 * so a user code is entered once, a device code is redeemed once, and a poll is either recorded or
 * refused.
 */
export function createDeviceGrantRepo({ doc, table }: RepoDeps) {
  return {
    // The user codes entered at /device: user-code-repo.ts.
    ...createUserCodeOperations({ doc, table }),

    /**
     * Stores a new device authorization (indexed under its client, without a user) and its user code,
     * in one transaction, each on condition that it is new. False, and nothing written, when the user
     * code is taken by another live authorization (the caller draws another) at `now`.
     */
    async createDeviceAuthorization(authorization: DeviceAuthorization, userCodeHash: string, now = new Date()): Promise<boolean> {
      const userCode: UserCode = {
        familyId: authorization.familyId, clientId: authorization.clientId, scopes: authorization.scopes, expiresAt: authorization.expiresAt,
      };
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: table,
                Item: { ...familyKey(authorization.familyId), ...pendingDeviceIndexKey(authorization.clientId, authorization.familyId), ...authorization },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              // A code taken by an item past its TTL (not yet deleted by DynamoDB) is free again.
              Put: {
                TableName: table, Item: { ...userCodeKey(userCodeHash), ...userCode },
                ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
                ExpressionAttributeValues: { ':now': epochSeconds(now) },
              },
            },
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error)[1] === 'ConditionalCheckFailed') return false;
        throw error;
      }
    },

    /**
     * Records a poll of a device code: one UpdateItem, on condition that the code is this item's and
     * this client's (`confidential` as the client authenticated: a public client's poll cannot poll a
     * code of a confidential one), unexpired, and that the device waited its interval (less
     * POLL_LEEWAY_MS). Answers the item as the poll left it, or, refused, as it was: the caller tells
     * pending, approved, denied, expired and too fast apart from it, with no further read.
     */
    async recordPoll(familyId: string, deviceCodeHash: string, clientId: string, confidential: boolean, now: number): Promise<PollOutcome> {
      try {
        const { Attributes } = await doc.send(new UpdateCommand({
          TableName: table,
          Key: familyKey(familyId),
          UpdateExpression: 'SET nextPollAt = intervalMs + :now',
          ConditionExpression: 'deviceCodeHash = :hash AND clientId = :client AND expiresAt > :nowSeconds '
            + 'AND confidential = :confidential AND (attribute_not_exists(nextPollAt) OR nextPollAt <= :onTime)',
          ExpressionAttributeValues: {
            ':now': now, ':hash': deviceCodeHash, ':client': clientId, ':nowSeconds': Math.floor(now / 1000), ':onTime': now + POLL_LEEWAY_MS,
            ':confidential': confidential,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }));
        return { polled: true, item: fromItem(Attributes!) };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const old = (error as { Item?: Record<string, unknown> }).Item;
        // A failed condition returns the item in DynamoDB's own JSON: the document client does not convert errors.
        return { polled: false, item: old ? fromItem(unmarshall(old as Parameters<typeof unmarshall>[0])) : undefined };
      }
    },

    /**
     * A poll that came too early (RFC 8628 §3.5 slow_down): the interval grows by `stepMs` for this
     * and every later poll, and the next poll is due a whole new interval from now. One UpdateItem.
     */
    async slowDown(familyId: string, deviceCodeHash: string, stepMs: number, now: number): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: familyKey(familyId),
          UpdateExpression: 'SET intervalMs = intervalMs + :step, nextPollAt = intervalMs + :nextFromNow',
          ConditionExpression: 'deviceCodeHash = :hash AND attribute_exists(intervalMs)',
          ExpressionAttributeValues: { ':step': stepMs, ':nextFromNow': now + stepMs, ':hash': deviceCodeHash },
        }));
      } catch (error) {
        // Redeemed or revoked in between: nothing to slow down.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /**
     * The user's decision on a device authorization, in one transaction: the user code is used up
     * (deleted), and the authorization, still pending and unexpired, becomes approved (for the user,
     * under the consent's generation, indexed under the user like every family) or denied. An
     * approval records the consent too, on condition that the stored one is still `previous`.
     */
    async decide(
      userCodeHash: string, code: UserCode, decision: { allow: true; consent: Consent; previous: Consent | undefined } | { allow: false }, now: Date,
    ): Promise<DeviceWriteOutcome> {
      const nowSeconds = epochSeconds(now);
      const family = decision.allow
        ? {
          UpdateExpression: 'SET #status = :approved, userId = :user, gsi1sk = :gsi1sk, decidedAt = :at'
            + `${decision.consent.grantGeneration === undefined ? '' : ', grantGeneration = :generation'}`,
          values: {
            ':approved': 'device_approved', ':user': decision.consent.userId, ':at': formatTimestamp(now),
            ':gsi1sk': familiesOfClientIndexKey(code.clientId, decision.consent.userId, code.familyId).gsi1sk,
            // Without a generation (a consent recorded before them) the document client drops it (removeUndefinedValues), unused.
            ':generation': decision.consent.grantGeneration,
          },
        }
        : { UpdateExpression: 'SET #status = :denied, decidedAt = :at', values: { ':denied': 'device_denied', ':at': formatTimestamp(now) } };
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: table, Key: userCodeKey(userCodeHash),
                ConditionExpression: 'familyId = :family AND expiresAt > :now', ExpressionAttributeValues: { ':family': code.familyId, ':now': nowSeconds },
              },
            },
            {
              Update: {
                TableName: table, Key: familyKey(code.familyId),
                UpdateExpression: family.UpdateExpression,
                ConditionExpression: '#status = :pending AND expiresAt > :now',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ...family.values, ':pending': 'device_pending', ':now': nowSeconds },
              },
            },
            ...(decision.allow ? [consentPutItem(table, decision.consent, decision.previous)] : []),
          ],
        }));
        return 'done';
      } catch (error) {
        // Any other error than a cancellation has no cancellation reasons: it is thrown below.
        const codes = cancellationCodes(error);
        if (codes[0] === 'ConditionalCheckFailed' || codes[1] === 'ConditionalCheckFailed') return 'not_pending';
        if (codes[2] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict')) return 'consent_changed';
        throw error;
      }
    },

    /**
     * Redeems an approved device authorization: one transaction that turns it into its active family,
     * whose first refresh token has `activeTokenHash`, on condition that it is still approved and
     * unexpired, and that the user's consent still stands under the generation it was approved under.
     * The item keeps the device code's hash (presented again, it revokes the family). `not_pending`:
     * redeemed, revoked or expired since it was read; `consent_changed`: the user revoked the
     * application since approving.
     */
    async redeemDeviceCode(
      authorization: Pick<DeviceAuthorization, 'familyId' | 'clientId' | 'deviceCodeHash' | 'userId' | 'grantGeneration'>, activeTokenHash: string, now: Date,
    ): Promise<DeviceWriteOutcome> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: familyKey(authorization.familyId),
                UpdateExpression: 'SET #status = :active, activeTokenHash = :token, createdAt = :at REMOVE expiresAt, nextPollAt, intervalMs, confidential',
                ConditionExpression: '#status = :approved AND deviceCodeHash = :hash AND expiresAt > :now',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':active': 'active', ':approved': 'device_approved', ':token': activeTokenHash, ':hash': authorization.deviceCodeHash,
                  ':at': formatTimestamp(now), ':now': epochSeconds(now),
                },
              },
            },
            consentStandsCheck(table, authorization.userId!, authorization.clientId, authorization.grantGeneration),
          ],
        }));
        return 'done';
      } catch (error) {
        // Any other error than a cancellation has no cancellation reasons: it is thrown below.
        const codes = cancellationCodes(error);
        if (codes[0] === 'ConditionalCheckFailed') return 'not_pending';
        if (codes[1] === 'ConditionalCheckFailed') return 'consent_changed';
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const DEVICE_GRANT_REPO_OPERATIONS = {
  createDeviceAuthorization: { actions: ['PutItem'] },
  // The device authorization's conditional update, and nothing else.
  recordPoll: { actions: ['UpdateItem'] },
  slowDown: { actions: ['UpdateItem'] },
  getUserCode: { actions: ['GetItem'] },
  countUserCodeEntry: { actions: ['UpdateItem'] },
  decide: { actions: ['DeleteItem', 'UpdateItem', 'PutItem'] },
  redeemDeviceCode: { actions: ['UpdateItem', 'ConditionCheckItem'] },
} as const satisfies RepoOperations<DeviceGrantRepo>;
