import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  REUSE_DETECTION_SECONDS, REVOKED_GRANT_SECONDS, type AuthorizationCode, type Consent, type RefreshToken, type TokenFamily,
} from '#shared/domain/grant';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import { epochSeconds } from '#shared/domain/time';
import { createBatchReader, type BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, MAX_TRANSACTION_ITEMS, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { NotFoundError } from '#shared/errors';
import {
  clientKey, codeKey, consentKey, consentOfClientIndexKey, CONSENT_SK_PREFIX, familiesOfClientIndexKey, familyKey, fromItem, refreshTokenKey,
} from '#shared/data/keys';

/** Why a token-endpoint write lost: the caller maps each to the right OAuth answer. */
export class GrantWriteError extends Error {
  constructor(readonly reason: 'code_used' | 'family_revoked' | 'token_rotated' | 'conflict') {
    super(reason);
    this.name = 'GrantWriteError';
  }
}

export type GrantRepo = ReturnType<typeof createGrantRepo>;

/** Why a family was revoked: the user (or the application's deletion), a replayed code, a reused refresh token, or the client (RFC 7009). */
export type RevocationReason = 'user_revoked' | 'code_replay' | 'refresh_token_reuse' | 'token_revoked';

/** An active token family as its revocation needs it: the id and the current refresh token's hash. */
export interface ActiveFamily {
  familyId: string;
  /** Absent only for a family written before the repository kept it. */
  activeTokenHash?: string;
}

/** What ends with an application, or with one user's authorization of it. */
export interface ClientGrants {
  families: ActiveFamily[];
  /** The users whose consent to the application is stored. */
  consentUserIds: string[];
}

/** Attempts of one revocation transaction whose families changed since they were read. */
const REVOCATION_ATTEMPTS = 3;

const isCancelled = (error: unknown) => error instanceof Error && error.name === 'TransactionCanceledException';
const cancellationCodes = (error: unknown) =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);

/** Access patterns of consents, authorization codes, token families and refresh tokens. */
export function createGrantRepo({ doc, table }: RepoDeps) {
  const toWriteError = (error: unknown, reasons: GrantWriteError['reason'][]) => {
    if (isCancelled(error)) {
      const failed = cancellationCodes(error).findIndex((code) => code === 'ConditionalCheckFailed');
      if (failed >= 0 && reasons[failed]) return new GrantWriteError(reasons[failed]!);
      return new GrantWriteError('conflict');
    }
    return error;
  };

  const { getItems: batchGet } = createBatchReader({ doc, table });
  /**
   * The update that revokes a family under `condition` (on `values`), and gives it a TTL (kept if it
   * has one). `revokedReason` (the first one kept) tells the webhook pipeline why: its stream record
   * becomes the application's `grant.revoked` event (shared/webhooks/events.ts).
   */
  const revokeFamilyUpdate = (familyId: string, expiresAt: number, condition: string, values: Record<string, unknown> = {}, reason: RevocationReason = 'user_revoked') => ({
    TableName: table,
    Key: familyKey(familyId),
    UpdateExpression: 'SET #status = :revoked, expiresAt = if_not_exists(expiresAt, :expires), revokedReason = if_not_exists(revokedReason, :reason)',
    ConditionExpression: condition,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':revoked': 'revoked', ':expires': expiresAt, ':reason': reason, ...values },
  });
  /** The update that gives a refresh token a TTL (kept if it has one: a rotated token keeps its own). */
  const expireTokenUpdate = (tokenHash: string, expiresAt: number) => ({
    TableName: table,
    Key: refreshTokenKey(tokenHash),
    UpdateExpression: 'SET expiresAt = if_not_exists(expiresAt, :expires)',
    ExpressionAttributeValues: { ':expires': expiresAt },
  });
  /**
   * The items that revoke an active family in a transaction: the family, on condition that it is
   * still active with the same current token (a rotation in between fails it, and the caller reads
   * the family again), and that token's TTL. The token update has no condition: the family names
   * its current token in the same transaction that writes it, so the token exists.
   */
  const revokeActiveFamily = ({ familyId, activeTokenHash }: ActiveFamily, expiresAt: number): TransactItem[] => (activeTokenHash
    ? [
        { Update: revokeFamilyUpdate(familyId, expiresAt, '#status = :active AND activeTokenHash = :current', { ':active': 'active', ':current': activeTokenHash }) },
        { Update: expireTokenUpdate(activeTokenHash, expiresAt) },
      ]
    : [{ Update: revokeFamilyUpdate(familyId, expiresAt, '#status = :active AND attribute_not_exists(activeTokenHash)', { ':active': 'active' }) }]);
  /**
   * Sends one transaction of revocation units (`final`: the one that ends with `last`). A family whose
   * condition failed changed since it was read (rotated, or revoked by someone else): it is read
   * again and the transaction retried with its new current token, or without it.
   */
  async function sendRevocations(chunk: readonly Unit[], final: boolean, missing: string, expiresAt: number): Promise<void> {
    let units = chunk;
    for (let attempt = 1; ; attempt++) {
      const items = units.flatMap((unit) => unit.items);
      try {
        if (items.length > 0) await doc.send(new TransactWriteCommand({ TransactItems: items }));
        return;
      } catch (error) {
        if (!isCancelled(error)) throw error;
        const codes = cancellationCodes(error);
        if (final && codes[items.length - 1] === 'ConditionalCheckFailed') throw new NotFoundError(missing);
        const stale = new Set<Unit>();
        let offset = 0;
        for (const unit of units) {
          if (unit.family !== undefined && codes[offset] === 'ConditionalCheckFailed') stale.add(unit);
          offset += unit.items.length;
        }
        if (stale.size === 0 || attempt >= REVOCATION_ATTEMPTS) throw error;
        units = await Promise.all(units.map(async (unit) => {
          if (!stale.has(unit)) return unit;
          const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(unit.family!), ConsistentRead: true }));
          return { family: unit.family, items: Item?.status === 'active' ? revokeActiveFamily(activeFamily(Item), expiresAt) : [] };
        }));
      }
    }
  }
  /** A consent as stored: in the user's partition, and indexed under its application (see consentOfClientIndexKey). */
  const consentItem = (consent: Consent) => ({
    ...consentKey(consent.userId, consent.clientId), ...consentOfClientIndexKey(consent.clientId, consent.userId), ...consent,
  });

  return {
    /** The user's consent to a client, as part of a combined read (none without a user). */
    consentRead(userId: string | undefined, clientId: string | undefined): BatchRead<Consent | undefined> {
      return {
        keys: userId && isPlausibleClientId(clientId) ? [consentKey(userId, clientId)] : [],
        parse: ([item]) => (item ? fromItem<Consent>(item) : undefined),
      };
    },

    /** One GetItem. */
    async getConsent(userId: string, clientId: string): Promise<Consent | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: consentKey(userId, clientId) }));
      return Item ? fromItem<Consent>(Item) : undefined;
    },

    /** The applications a user has authorized. One Query. */
    async listConsentsByUser(userId: string): Promise<Consent[]> {
      const { pk } = consentKey(userId, '');
      const { Items = [] } = await doc.send(new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': CONSENT_SK_PREFIX },
      }));
      return Items.map((item) => fromItem<Consent>(item));
    },

    async saveConsent(consent: Consent): Promise<void> {
      await doc.send(new PutCommand({ TableName: table, Item: consentItem(consent) }));
    },

    async deleteConsent(userId: string, clientId: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: consentKey(userId, clientId) }));
    },

    /** Stores a new code under its hash, with a TTL at its expiry. */
    async createCode(codeHash: string, code: AuthorizationCode): Promise<void> {
      await doc.send(new PutCommand({
        TableName: table,
        Item: { ...codeKey(codeHash), ...code },
        ConditionExpression: 'attribute_not_exists(pk)',
      }));
    },

    /** Records a consent and stores the code it leads to, in one transaction: both or neither. */
    async saveConsentWithCode(consent: Consent, codeHash: string, code: AuthorizationCode): Promise<void> {
      await doc.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: consentItem(consent) } },
          { Put: { TableName: table, Item: { ...codeKey(codeHash), ...code }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }));
    },

    /** The code (by hash) and the client, in one BatchGetItem. */
    async getCodeAndClient(codeHash: string, clientId: string) {
      const items = await batchGet([codeKey(codeHash), clientKey(clientId)]);
      return {
        code: items[0] && fromItem<AuthorizationCode>(items[0]),
        client: items[1] && fromItem<Client>(items[1]),
      };
    },

    /** The refresh token (by hash) and the client, in one BatchGetItem. */
    async getRefreshTokenAndClient(tokenHash: string, clientId: string) {
      const items = await batchGet([refreshTokenKey(tokenHash), clientKey(clientId)]);
      return {
        token: items[0] && fromItem<RefreshToken>(items[0]),
        client: items[1] && fromItem<Client>(items[1]),
      };
    },

    /** One GetItem. */
    async getRefreshToken(tokenHash: string): Promise<RefreshToken | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: refreshTokenKey(tokenHash), ConsistentRead: true }));
      return Item ? fromItem<RefreshToken>(Item) : undefined;
    },

    /**
     * Marks the code used and creates the family and its first refresh token, in one transaction
     * that only one exchange of a code can win. Throws GrantWriteError('code_used') otherwise. The
     * code keeps the family and the token (a replay revokes them); the family names its current token.
     */
    async redeemCode(codeHash: string, usedAt: string, family: TokenFamily, first: RefreshToken): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: codeKey(codeHash),
                UpdateExpression: 'SET usedAt = :usedAt, familyId = :familyId, refreshTokenHash = :first',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
                ExpressionAttributeValues: { ':usedAt': usedAt, ':familyId': family.familyId, ':first': first.tokenHash },
              },
            },
            { Put: { TableName: table, Item: { ...familyItem(family), activeTokenHash: first.tokenHash } } },
            { Put: { TableName: table, Item: { ...refreshTokenKey(first.tokenHash), ...first } } },
          ],
        }));
      } catch (error) {
        throw toWriteError(error, ['code_used']);
      }
    },

    /**
     * Replaces an active refresh token by its successor in one transaction: the family must be
     * active and the old token still active, so of concurrent rotations exactly one wins. The family
     * now names the successor as its current token; the old token is kept REUSE_DETECTION_SECONDS
     * (TTL) for the grace window and reuse detection.
     */
    async rotateRefreshToken(old: RefreshToken, successor: RefreshToken, sealedSuccessor: string, rotatedAt: number): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: familyKey(old.familyId),
                UpdateExpression: 'SET activeTokenHash = :next',
                ConditionExpression: '#status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':active': 'active', ':next': successor.tokenHash },
              },
            },
            {
              Update: {
                TableName: table,
                Key: refreshTokenKey(old.tokenHash),
                UpdateExpression: 'SET #status = :rotated, rotatedAt = :at, successorHash = :next, sealedSuccessor = :sealed, expiresAt = :expires',
                ConditionExpression: '#status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':rotated': 'rotated', ':active': 'active', ':at': rotatedAt, ':next': successor.tokenHash, ':sealed': sealedSuccessor,
                  ':expires': Math.floor(rotatedAt / 1000) + REUSE_DETECTION_SECONDS,
                },
              },
            },
            { Put: { TableName: table, Item: { ...refreshTokenKey(successor.tokenHash), ...successor } } },
          ],
        }));
      } catch (error) {
        throw toWriteError(error, ['family_revoked', 'token_rotated']);
      }
    },

    /** One GetItem (consistent). */
    async getFamily(familyId: string): Promise<TokenFamily | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(familyId), ConsistentRead: true }));
      return Item ? fromItem<TokenFamily>(Item) : undefined;
    },

    /**
     * Revokes a family: every refresh token of it stops working, and the family and its current
     * token get a TTL REVOKED_GRANT_SECONDS from `now`. With `currentHint`, the token the caller
     * takes for the current one, that is one transaction; without, or when the hint is not current,
     * an UpdateItem that returns the family's current token, then an UpdateItem of that token.
     * Idempotent; a family that does not exist is no error.
     */
    async revokeFamily(familyId: string, currentHint?: string, now = new Date(), reason: RevocationReason = 'token_revoked'): Promise<void> {
      const expiresAt = epochSeconds(now) + REVOKED_GRANT_SECONDS;
      if (currentHint) {
        try {
          await doc.send(new TransactWriteCommand({
            TransactItems: [
              { Update: revokeFamilyUpdate(familyId, expiresAt, 'activeTokenHash = :current', { ':current': currentHint }, reason) },
              { Update: { ...expireTokenUpdate(currentHint, expiresAt), ConditionExpression: 'attribute_exists(pk)' } },
            ],
          }));
          return;
        } catch (error) {
          if (!isCancelled(error)) throw error;
        }
      }
      let before: Record<string, unknown> | undefined;
      try {
        ({ Attributes: before } = await doc.send(new UpdateCommand({
          ...revokeFamilyUpdate(familyId, expiresAt, 'attribute_exists(pk)', {}, reason), ReturnValues: 'ALL_OLD',
        })));
      } catch (error) {
        if (isConditionalCheckFailed(error)) return;
        throw error;
      }
      if (before?.status !== 'active' || typeof before.activeTokenHash !== 'string') return;
      await doc.send(new UpdateCommand({ ...expireTokenUpdate(before.activeTokenHash, expiresAt), ConditionExpression: 'attribute_exists(pk)' }))
        .catch((error: unknown) => {
          if (!isConditionalCheckFailed(error)) throw error;
        });
    },

    /**
     * The active families and the stored consents of a client, or of one user of it: one Query on
     * GSI1 (per 1 MB page), where both are indexed under the client.
     */
    async grantsOf(clientId: string, userId?: string): Promise<ClientGrants> {
      const { gsi1pk } = familiesOfClientIndexKey(clientId, '', '');
      const familyPrefix = familyKey('').pk;
      const grants: ClientGrants = { families: [], consentUserIds: [] };
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new QueryCommand({
          TableName: table,
          IndexName: 'gsi1',
          KeyConditionExpression: userId ? 'gsi1pk = :pk AND begins_with(gsi1sk, :user)' : 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': gsi1pk, ...(userId ? { ':user': `USER#${userId}#` } : {}) },
          ExclusiveStartKey: startKey,
        }));
        for (const item of page.Items ?? []) {
          if (String(item.pk).startsWith(familyPrefix)) {
            if (item.status === 'active') grants.families.push(activeFamily(item));
          } else if (String(item.sk).startsWith(CONSENT_SK_PREFIX)) {
            grants.consentUserIds.push(String(item.userId));
          }
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return grants;
    },

    /**
     * Revokes the families (each with its current token's TTL: two items), deletes the `deleting`
     * items, then applies `last` (the deletion that ends the grant: a consent or an application), in
     * transactions of at most 100 items with `last` in the final one: one request for up to 49
     * families. Should a transaction fail, `last` has not happened and a retry finds what is left. A
     * family rotated or revoked since it was read is read again (GetItem) and the transaction retried.
     * Throws NotFoundError(`missing`) when the condition of `last` fails.
     */
    async revokeFamiliesThen(
      families: readonly ActiveFamily[], last: TransactItem, missing: string,
      { deleting = [], now = new Date() }: { deleting?: readonly TransactItem[]; now?: Date } = {},
    ): Promise<void> {
      const expiresAt = epochSeconds(now) + REVOKED_GRANT_SECONDS;
      // Units stay whole within a transaction: a family is never revoked without its token's TTL.
      const units: Unit[] = [
        ...families.map((family) => ({ family: family.familyId, items: revokeActiveFamily(family, expiresAt) })),
        ...deleting.map((item) => ({ items: [item] })),
      ];
      // A family counts as two items even without a known token: read again, it may have one.
      const sizeOf = (unit: Unit) => (unit.family === undefined ? unit.items.length : 2);
      const chunks: Unit[][] = [[]];
      let size = 0;
      for (const unit of [...units, { items: [last] }]) {
        if (size + sizeOf(unit) > MAX_TRANSACTION_ITEMS) {
          chunks.push([]);
          size = 0;
        }
        chunks.at(-1)!.push(unit);
        size += sizeOf(unit);
      }
      for (const [i, chunk] of chunks.entries()) await sendRevocations(chunk, i === chunks.length - 1, missing, expiresAt);
    },

    /** The transaction item that forgets a user's consent to a client. */
    deleteConsentItem(userId: string, clientId: string): TransactItem {
      return { Delete: { TableName: table, Key: consentKey(userId, clientId) } };
    },
  };
}

/** Items that belong in one transaction; `family` names the family a revocation unit revokes. */
interface Unit {
  family?: string;
  items: TransactItem[];
}

function activeFamily(item: Record<string, unknown>): ActiveFamily {
  return typeof item.activeTokenHash === 'string'
    ? { familyId: String(item.familyId), activeTokenHash: item.activeTokenHash }
    : { familyId: String(item.familyId) };
}

function familyItem(family: TokenFamily) {
  return { ...familyKey(family.familyId), ...familiesOfClientIndexKey(family.clientId, family.userId, family.familyId), ...family };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const GRANT_REPO_NEEDS = {
  consentRead: { actions: ['BatchGetItem'] },
  getConsent: { actions: ['GetItem'] },
  listConsentsByUser: { actions: ['Query'] },
  saveConsent: { actions: ['PutItem'] },
  deleteConsent: { actions: ['DeleteItem'] },
  createCode: { actions: ['PutItem'] },
  saveConsentWithCode: { actions: ['PutItem'] },
  getCodeAndClient: { actions: ['BatchGetItem'] },
  getRefreshTokenAndClient: { actions: ['BatchGetItem'] },
  getRefreshToken: { actions: ['GetItem'] },
  redeemCode: { actions: ['UpdateItem', 'PutItem'] },
  // The family's conditional update and the old token's, and the successor.
  rotateRefreshToken: { actions: ['UpdateItem', 'PutItem'] },
  getFamily: { actions: ['GetItem'] },
  revokeFamily: { actions: ['UpdateItem'] },
  grantsOf: { actions: [], index: true },
  // Reads again a family that changed since the Query. Its `last` and `deleting` items are the
  // caller's (deleteConsentItem, deleteClientItem), which declare their own action.
  revokeFamiliesThen: { actions: ['UpdateItem', 'GetItem'] },
  deleteConsentItem: { actions: ['DeleteItem'] },
} as const satisfies RepoNeeds<GrantRepo>;
