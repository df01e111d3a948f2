import type { RepoOperations } from '#shared/data/table-access';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import type { AuthorizationCode, Consent, GrantItem } from '#shared/domain/grant';
import type { Client } from '#shared/domain/client';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { createBatchReader } from '#shared/data/batch-read';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, queryAll, type RepoDeps } from '#shared/data/dynamodb';
import { clientKey, consentKey, familiesOfClientIndexKey, familyKey, fromItem, grantsOfClientIndexKey } from '#shared/data/item-keys';
import { createGrantRevocations } from '#shared/data/grant-revocations';
import { consentPutItem, createConsentOperations } from '#shared/data/consent-repo';

/** Why a token-endpoint write lost: the caller maps each to the right OAuth answer. */
export class GrantWriteError extends Error {
  constructor(readonly reason: 'code_used' | 'token_rotated' | 'conflict') {
    super(reason);
    this.name = 'GrantWriteError';
  }
}

export type GrantRepo = ReturnType<typeof createGrantRepo>;

/** Access patterns of consents (consent-repo.ts), authorization codes, token families and refresh tokens. */
export function createGrantRepo({ doc, table }: RepoDeps) {
  const { getItems: batchGet } = createBatchReader({ doc, table });
  /** The client, the family (or code) `familyId` names, and the user's consent to the client: one BatchGetItem. */
  async function readGrant(familyId: string | undefined, clientId: string, userId: string | undefined, readClient: boolean) {
    const keys = [...(readClient ? [clientKey(clientId)] : []), ...(familyId ? [familyKey(familyId)] : []), ...(familyId && userId ? [consentKey(userId, clientId)] : [])];
    const items = await batchGet(keys);
    const client = readClient ? items.shift() : undefined;
    const [family, consent] = items;
    return { client: client && fromItem<Client>(client), family, consent: consent && fromItem<Consent>(consent) };
  }

  return {
    // Consents: consent-repo.ts; revoking families and finding a client's grants: grant-revocations.ts.
    ...createConsentOperations({ doc, table }),
    ...createGrantRevocations({ doc, table }),

    /**
     * When the application last used the user's grant: the latest rotation or exchange among the
     * user's token families of it (undefined: none active). One Query on GSI1 (per 1 MB page).
     */
    async lastUseOf(clientId: string, userId: string): Promise<Date | undefined> {
      const { gsi1pk, gsi1skPrefix } = grantsOfClientIndexKey(clientId, userId);
      const items = await queryAll({ doc, table }, {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :user)',
        ExpressionAttributeValues: { ':pk': gsi1pk, ':user': gsi1skPrefix },
      });
      let latest: number | undefined;
      for (const item of items) {
        if (item.status !== 'active') continue;
        const used = typeof item.rotatedAt === 'number' ? item.rotatedAt : Date.parse(`${String(item.createdAt)}Z`);
        if (Number.isFinite(used) && (latest === undefined || used > latest)) latest = used;
      }
      return latest === undefined ? undefined : new Date(latest);
    },

    /** Stores a new code as its family's item (pending), with a TTL at its expiry. */
    async createCode(code: AuthorizationCode): Promise<void> {
      await doc.send(new PutCommand({ TableName: table, Item: codeItem(code), ConditionExpression: 'attribute_not_exists(pk)' }));
    },

    /**
     * Records a consent and stores the code it leads to, in one transaction: both or neither, and
     * only while the stored consent is still `previous` (the one the decision was made on: same
     * generation, or none), so that an allow racing a revocation cannot bring the revoked grant (or
     * its scopes) back. False, and nothing written, when the consent changed since it was read.
     */
    async saveConsentWithCode(consent: Consent, previous: Consent | undefined, code: AuthorizationCode): Promise<boolean> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            consentPutItem(table, consent, previous),
            { Put: { TableName: table, Item: codeItem(code), ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }));
        return true;
      } catch (error) {
        // A concurrent change of the consent (committed, or in flight: TransactionConflict).
        if (isCancelled(error) && ['ConditionalCheckFailed', 'TransactionConflict'].includes(cancellationCodes(error)[0] ?? '')) return false;
        throw error;
      }
    },

    /**
     * What a code exchange needs, in one BatchGetItem (consistent): the item a code names (the code,
     * or the family it became), the client (unless `readClient` is false: the caller has it), and the
     * user's consent to it. Without a family id only the client is read (a code that is not one of
     * ours); nothing at all without the client either.
     */
    async getCodeClientAndConsent(familyId: string | undefined, clientId: string, userId: string | undefined, readClient = true) {
      const { client, family, consent } = await readGrant(familyId, clientId, userId, readClient);
      return { client, consent, code: family && fromItem<GrantItem>(family) };
    },

    /**
     * What a refresh needs, in one BatchGetItem (consistent): the family a refresh token names, the
     * client (unless `readClient` is false: the caller has it), and the user's consent to it. Without
     * a family id only the client is read (a token that is not one of ours); without a user id, no
     * consent (a revocation does not need it).
     */
    async getFamilyClientAndConsent(familyId: string | undefined, clientId: string, userId?: string, readClient = true) {
      const { client, family, consent } = await readGrant(familyId, clientId, userId, readClient);
      return { client, consent, family: family && fromItem<GrantItem>(family) };
    },

    /**
     * Exchanges a code: one UpdateItem that turns the pending code into its active family, whose
     * first refresh token has `activeTokenHash`, on condition that the item is still that code,
     * pending and unexpired; so of concurrent exchanges of one code exactly one wins. The item keeps
     * the code's hash (a replay revokes the family) and loses its TTL. Throws GrantWriteError
     * 'code_used' when the condition fails (exchanged, revoked, or expired since it was read);
     * 'conflict' when a revocation's transaction held the item at that moment (retry). The consent
     * is checked by the caller, from the same read as the code (see docs/design.md).
     */
    async redeemCode(familyId: string, codeHash: string, activeTokenHash: string, now: Date): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: familyKey(familyId),
          UpdateExpression: 'SET #status = :active, activeTokenHash = :token, createdAt = :at REMOVE expiresAt, redirectUri, codeChallenge',
          ConditionExpression: '#status = :pending AND codeHash = :code AND expiresAt > :now',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':active': 'active', ':pending': 'pending', ':token': activeTokenHash, ':code': codeHash, ':at': formatTimestamp(now), ':now': epochSeconds(now),
          },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new GrantWriteError('code_used');
        if (error instanceof Error && error.name === 'TransactionConflictException') throw new GrantWriteError('conflict');
        throw error;
      }
    },

    /**
     * Rotates a family's refresh token: one UpdateItem, on condition that the family is active and
     * `presentedHash` is still its current token, so of concurrent rotations of one token exactly one
     * wins. Throws GrantWriteError 'token_rotated' when the condition fails (the token was rotated,
     * or the family revoked: the caller reads the family again to tell), 'conflict' when a
     * revocation's transaction held the family at that moment. The presented token becomes the
     * previous one, its successor (sealed with it, for a retry of the presented token until the
     * successor is used) the current one. The consent is checked by the caller, from the same read
     * (see docs/design.md).
     */
    async rotateRefreshToken(familyId: string, presentedHash: string, successorHash: string, sealedSuccessor: string, rotatedAt: number): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: familyKey(familyId),
          UpdateExpression: 'SET activeTokenHash = :next, previousTokenHash = :presented, rotatedAt = :at, sealedSuccessor = :sealed',
          ConditionExpression: '#status = :active AND activeTokenHash = :presented',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active', ':presented': presentedHash, ':next': successorHash, ':at': rotatedAt, ':sealed': sealedSuccessor },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new GrantWriteError('token_rotated');
        if (error instanceof Error && error.name === 'TransactionConflictException') throw new GrantWriteError('conflict');
        throw error;
      }
    },

    /** A family's item, the code it still is or the family (one GetItem, consistent). */
    async getFamily(familyId: string): Promise<GrantItem | undefined> {
      // Stryker disable next-line BooleanLiteral: DynamoDB Local reads consistently whatever the flag; it matters on the real service
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: familyKey(familyId), ConsistentRead: true }));
      return Item ? fromItem<GrantItem>(Item) : undefined;
    },

  };

}

/** A code as stored: in its family's item, indexed under the client as families are (so a revocation finds it). */
function codeItem(code: AuthorizationCode) {
  return { ...familyKey(code.familyId), ...familiesOfClientIndexKey(code.clientId, code.userId, code.familyId), ...code };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const GRANT_REPO_OPERATIONS = {
  consentRead: { actions: ['BatchGetItem'] },
  getConsent: { actions: ['GetItem'] },
  listConsentsByUser: { actions: ['Query'] },
  saveConsent: { actions: ['PutItem'] },
  replaceConsent: { actions: ['PutItem'] },
  lastUseOf: { actions: [], index: true },
  deleteConsent: { actions: ['DeleteItem'] },
  createCode: { actions: ['PutItem'] },
  saveConsentWithCode: { actions: ['PutItem'] },
  getCodeClientAndConsent: { actions: ['BatchGetItem'] },
  getFamilyClientAndConsent: { actions: ['BatchGetItem'] },
  // The code's conditional update, which makes it the family, and nothing else.
  redeemCode: { actions: ['UpdateItem'] },
  // The family's conditional update, and nothing else.
  rotateRefreshToken: { actions: ['UpdateItem'] },
  getFamily: { actions: ['GetItem'] },
  revokeFamily: { actions: ['UpdateItem'] },
  grantsOf: { actions: [], index: true },
  // Its `last` and `deleting` items are the caller's (deleteConsentItem, deleteClientItem), which
  // declare their own action.
  revokeFamiliesThen: { actions: ['UpdateItem'] },
  revokeFamilies: { actions: ['UpdateItem'] },
  deleteConsentItem: { actions: ['DeleteItem'] },
} as const satisfies RepoOperations<GrantRepo>;
