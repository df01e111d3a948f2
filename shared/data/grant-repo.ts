import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuthorizationCode, Consent, RefreshToken, TokenFamily } from '#shared/domain/grant';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import { createBatchReader, type BatchRead } from '#shared/data/batch-read';
import type { RepoDeps, TransactItem } from '#shared/data/client';
import { NotFoundError } from '#shared/errors';
import {
  clientKey, codeKey, consentKey, CONSENT_SK_PREFIX, familiesOfClientIndexKey, familyKey, fromItem, refreshTokenKey,
} from '#shared/data/keys';

/** Why a token-endpoint write lost: the caller maps each to the right OAuth answer. */
export class GrantWriteError extends Error {
  constructor(readonly reason: 'code_used' | 'family_revoked' | 'token_rotated' | 'conflict') {
    super(reason);
    this.name = 'GrantWriteError';
  }
}

export type GrantRepo = ReturnType<typeof createGrantRepo>;

/** TransactWriteItems takes at most 100 items. */
const MAX_TRANSACTION_ITEMS = 100;

/** Access patterns of consents, authorization codes, token families and refresh tokens. */
export function createGrantRepo({ doc, table }: RepoDeps) {
  const toWriteError = (error: unknown, reasons: GrantWriteError['reason'][]) => {
    if (error instanceof Error && error.name === 'TransactionCanceledException') {
      const codes = ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);
      const failed = codes.findIndex((code) => code === 'ConditionalCheckFailed');
      if (failed >= 0 && reasons[failed]) return new GrantWriteError(reasons[failed]!);
      return new GrantWriteError('conflict');
    }
    return error;
  };

  const { getItems: batchGet } = createBatchReader({ doc, table });
  /** The update that revokes a family (only one that exists), alone or in a transaction. */
  const revokeFamilyUpdate = (familyId: string) => ({
    TableName: table,
    Key: familyKey(familyId),
    UpdateExpression: 'SET #status = :revoked',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':revoked': 'revoked' },
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
      await doc.send(new PutCommand({ TableName: table, Item: { ...consentKey(consent.userId, consent.clientId), ...consent } }));
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
          { Put: { TableName: table, Item: { ...consentKey(consent.userId, consent.clientId), ...consent } } },
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
     * that only one exchange of a code can win. Throws GrantWriteError('code_used') otherwise.
     */
    async redeemCode(codeHash: string, usedAt: string, family: TokenFamily, first: RefreshToken): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: codeKey(codeHash),
                UpdateExpression: 'SET usedAt = :usedAt, familyId = :familyId',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
                ExpressionAttributeValues: { ':usedAt': usedAt, ':familyId': family.familyId },
              },
            },
            { Put: { TableName: table, Item: familyItem(family) } },
            { Put: { TableName: table, Item: { ...refreshTokenKey(first.tokenHash), ...first } } },
          ],
        }));
      } catch (error) {
        throw toWriteError(error, ['code_used']);
      }
    },

    /**
     * Replaces an active refresh token by its successor in one transaction: the family must be
     * active and the old token still active, so of concurrent rotations exactly one wins.
     */
    async rotateRefreshToken(old: RefreshToken, successor: RefreshToken, sealedSuccessor: string, rotatedAt: number): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: table,
                Key: familyKey(old.familyId),
                ConditionExpression: '#status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':active': 'active' },
              },
            },
            {
              Update: {
                TableName: table,
                Key: refreshTokenKey(old.tokenHash),
                UpdateExpression: 'SET #status = :rotated, rotatedAt = :at, successorHash = :next, sealedSuccessor = :sealed',
                ConditionExpression: '#status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':rotated': 'rotated', ':active': 'active', ':at': rotatedAt, ':next': successor.tokenHash, ':sealed': sealedSuccessor,
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

    /** Revokes a family: every refresh token of it stops working. Idempotent. */
    async revokeFamily(familyId: string): Promise<void> {
      await doc.send(new UpdateCommand(revokeFamilyUpdate(familyId))).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
      });
    },

    /** The ids of the active families of a client, or of one user of it. One Query on GSI1 (per 1 MB page). */
    async activeFamiliesOf(clientId: string, userId?: string): Promise<string[]> {
      const { gsi1pk } = familiesOfClientIndexKey(clientId, '', '');
      const active: string[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new QueryCommand({
          TableName: table,
          IndexName: 'gsi1',
          KeyConditionExpression: userId ? 'gsi1pk = :pk AND begins_with(gsi1sk, :user)' : 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': gsi1pk, ...(userId ? { ':user': `USER#${userId}#` } : {}) },
          ExclusiveStartKey: startKey,
        }));
        for (const item of page.Items ?? []) if (item.status === 'active') active.push(String(item.familyId));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return active;
    },

    /**
     * Revokes the families, then applies `last` (the deletion that ends the grant: a consent or an
     * application), in transactions of at most 100 items with `last` in the final one: one request
     * for up to 99 families. Should a transaction fail, `last` has not happened and a retry finds the
     * families still active. Throws NotFoundError(`missing`) when the condition of `last` fails.
     */
    async revokeFamiliesThen(familyIds: readonly string[], last: TransactItem, missing: string): Promise<void> {
      const items: TransactItem[] = [...familyIds.map((familyId) => ({ Update: revokeFamilyUpdate(familyId) })), last];
      for (let start = 0; start < items.length; start += MAX_TRANSACTION_ITEMS) {
        const chunk = items.slice(start, start + MAX_TRANSACTION_ITEMS);
        try {
          await doc.send(new TransactWriteCommand({ TransactItems: chunk }));
        } catch (error) {
          const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
          if (chunk.includes(last) && reasons[chunk.length - 1]?.Code === 'ConditionalCheckFailed') throw new NotFoundError(missing);
          throw error;
        }
      }
    },

    /** The transaction item that forgets a user's consent to a client. */
    deleteConsentItem(userId: string, clientId: string): TransactItem {
      return { Delete: { TableName: table, Key: consentKey(userId, clientId) } };
    },
  };
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
  rotateRefreshToken: { actions: ['ConditionCheckItem', 'UpdateItem', 'PutItem'] },
  getFamily: { actions: ['GetItem'] },
  revokeFamily: { actions: ['UpdateItem'] },
  activeFamiliesOf: { actions: [], index: true },
  // Its last item is the caller's (deleteConsentItem, deleteClientItem): that one declares its own action.
  revokeFamiliesThen: { actions: ['UpdateItem'] },
  deleteConsentItem: { actions: ['DeleteItem'] },
} as const satisfies RepoNeeds<GrantRepo>;
