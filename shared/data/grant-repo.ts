import type { RepoNeeds } from '#shared/data/table-access';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { REVOKED_GRANT_SECONDS, type AuthorizationCode, type Consent, type GrantItem, type RevocationReason } from '#shared/domain/grant';
import { isPlausibleClientId, type Client } from '#shared/domain/client';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { createBatchReader, type BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, MAX_TRANSACTION_ITEMS, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { NotFoundError } from '#shared/errors';
import {
  clientKey, consentKey, consentOfClientIndexKey, consentsOfUserKey, familiesOfClientIndexKey, familyKey, fromItem,
  grantsOfClientIndexKey, isConsentKey, isFamilyKey,
} from '#shared/data/keys';

/** Why a token-endpoint write lost: the caller maps each to the right OAuth answer. */
export class GrantWriteError extends Error {
  constructor(readonly reason: 'code_used' | 'token_rotated' | 'conflict') {
    super(reason);
    this.name = 'GrantWriteError';
  }
}

export type GrantRepo = ReturnType<typeof createGrantRepo>;

/** A family that is not revoked (active, or a code not yet exchanged), as its revocation needs it: its id. */
export interface ActiveFamily {
  familyId: string;
}

/** What ends with an application, or with one user's authorization of it. */
export interface ClientGrants {
  families: ActiveFamily[];
  /** The users whose consent to the application is stored. */
  consentUserIds: string[];
}

/** Attempts of one revocation transaction that met a concurrent write (a rotation) or a family gone. */
const REVOCATION_ATTEMPTS = 3;

const isCancelled = (error: unknown) => error instanceof Error && error.name === 'TransactionCanceledException';
const cancellationCodes = (error: unknown) =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);

/**
 * The condition that a user's consent to an application still stands under `generation` (see
 * Consent.grantGeneration): it exists with that generation; for a consent from before generations
 * (none recorded), it exists without one. An allow writes its consent on this condition, so that it
 * cannot bring back a grant revoked (or changed) since the page read it.
 */
function grantCondition(generation: string | undefined) {
  return generation === undefined
    ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(grantGeneration)' }
    : { ConditionExpression: 'grantGeneration = :generation', ExpressionAttributeValues: { ':generation': generation } };
}

/**
 * The user's consent to a client, as part of a combined read (none without a user). Outside the
 * repository too, so that a page that only reads it (shared/accounts/session.ts) does not bundle the repository.
 */
export function consentRead(userId: string | undefined, clientId: string | undefined): BatchRead<Consent | undefined> {
  return {
    keys: userId && isPlausibleClientId(clientId) ? [consentKey(userId, clientId)] : [],
    parse: ([item]) => (item ? fromItem<Consent>(item) : undefined),
  };
}

/** Access patterns of consents, authorization codes, token families and refresh tokens. */
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
  /**
   * The update that revokes a family and gives it a TTL (kept if it has one): idempotent, and only
   * of a family that exists (no stub item is written for an unknown id). `revokedReason` (the first
   * one kept) tells the webhook pipeline why: its stream record becomes the application's
   * `grant.revoked` event (shared/webhooks/events.ts).
   */
  const revokeFamilyUpdate = (familyId: string, expiresAt: number, reason: RevocationReason) => ({
    TableName: table,
    Key: familyKey(familyId),
    UpdateExpression: 'SET #status = :revoked, expiresAt = if_not_exists(expiresAt, :expires), revokedReason = if_not_exists(revokedReason, :reason)',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':revoked': 'revoked', ':expires': expiresAt, ':reason': reason },
  });
  /**
   * Sends one transaction of revocations (`final`: the one that ends with `last`, its last item). A
   * family whose condition failed no longer exists (nothing to revoke) and is left out; a
   * transaction cancelled by a concurrent write (a rotation of one of its families at that moment)
   * is sent again.
   */
  async function sendRevocations(chunk: readonly TransactItem[], familyCount: number, final: boolean, missing: string): Promise<void> {
    let items = chunk;
    let families = familyCount;
    for (let attempt = 1; ; attempt++) {
      try {
        if (items.length > 0) await doc.send(new TransactWriteCommand({ TransactItems: [...items] }));
        return;
      } catch (error) {
        // Stryker disable next-line ConditionalExpression: any other error has no cancellation reasons, so it is thrown two lines down all the same
        if (!isCancelled(error)) throw error;
        const codes = cancellationCodes(error);
        if (final && codes[items.length - 1] === 'ConditionalCheckFailed') throw new NotFoundError(missing);
        // Stryker disable next-line MethodExpression: only families and `last` carry a condition, and a failed `last` is thrown above
        const gone = new Set(codes.slice(0, families).flatMap((code, i) => (code === 'ConditionalCheckFailed' ? [i] : [])));
        if (attempt >= REVOCATION_ATTEMPTS || (gone.size === 0 && !codes.includes('TransactionConflict'))) throw error;
        items = items.filter((_, i) => !gone.has(i));
        // Stryker disable next-line AssignmentOperator: `families` only bounds the slice above, which finds only families anyway
        families -= gone.size;
        // Stryker disable next-line ArithmeticOperator: a jittered pause before sending again; its length changes no outcome
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
      }
    }
  }
  /** A consent as stored: in the user's partition, and indexed under its application (see consentOfClientIndexKey). */
  const consentItem = (consent: Consent) => ({
    ...consentKey(consent.userId, consent.clientId), ...consentOfClientIndexKey(consent.clientId, consent.userId), ...consent,
  });

  return {
    consentRead,

    /** One GetItem. */
    async getConsent(userId: string, clientId: string): Promise<Consent | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: consentKey(userId, clientId) }));
      return Item ? fromItem<Consent>(Item) : undefined;
    },

    /** The applications a user has authorized. One Query. */
    async listConsentsByUser(userId: string): Promise<Consent[]> {
      const { pk, skPrefix } = consentsOfUserKey(userId);
      const { Items = [] } = await doc.send(new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      }));
      return Items.map((item) => fromItem<Consent>(item));
    },

    async saveConsent(consent: Consent): Promise<void> {
      await doc.send(new PutCommand({ TableName: table, Item: consentItem(consent) }));
    },

    async deleteConsent(userId: string, clientId: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: consentKey(userId, clientId) }));
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
      const unchanged = previous ? grantCondition(previous.grantGeneration) : { ConditionExpression: 'attribute_not_exists(pk)' };
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: consentItem(consent), ...unchanged } },
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
     * revocation's transaction held the family at that moment. The
     * presented token becomes the previous one, its successor (sealed with it, for the grace window)
     * the current one. The consent is checked by the caller, from the same read (see docs/design.md).
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

    /**
     * Revokes a family: every refresh token of it stops working, and the family gets a TTL
     * REVOKED_GRANT_SECONDS from `now`. One UpdateItem; idempotent; a family that does not exist is no error.
     */
    async revokeFamily(familyId: string, now: Date, reason: RevocationReason): Promise<void> {
      try {
        await doc.send(new UpdateCommand(revokeFamilyUpdate(familyId, epochSeconds(now) + REVOKED_GRANT_SECONDS, reason)));
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    },

    /**
     * The families not revoked (active, or codes not yet exchanged) and the stored consents of a
     * client, or of one user of it: one Query on GSI1 (per 1 MB page), where both are indexed under
     * the client.
     */
    async grantsOf(clientId: string, userId?: string): Promise<ClientGrants> {
      const { gsi1pk, gsi1skPrefix } = grantsOfClientIndexKey(clientId, userId);
      const grants: ClientGrants = { families: [], consentUserIds: [] };
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(new QueryCommand({
          TableName: table,
          IndexName: 'gsi1',
          KeyConditionExpression: gsi1skPrefix ? 'gsi1pk = :pk AND begins_with(gsi1sk, :user)' : 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': gsi1pk, ...(gsi1skPrefix ? { ':user': gsi1skPrefix } : {}) },
          ExclusiveStartKey: startKey,
        }));
        // Stryker disable next-line ArrayDeclaration: a Query answers Items, empty or not
        for (const item of page.Items ?? []) {
          if (isFamilyKey(item)) {
            // A code not yet exchanged is revoked too: its exchange can then no longer win.
            if (item.status === 'active' || item.status === 'pending') grants.families.push({ familyId: String(item.familyId) });
          // Stryker disable next-line ConditionalExpression: only families and consents are indexed under an application (keys.ts)
          } else if (isConsentKey(item)) {
            grants.consentUserIds.push(String(item.userId));
          }
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return grants;
    },

    /**
     * Revokes the families (one item each: the family and its TTL), deletes the `deleting` items,
     * then applies `last` (the deletion that ends the grant: a consent or an application), in
     * transactions of at most 100 items with `last` in the final one: one request for up to 99
     * families. Should a transaction fail, `last` has not happened and a retry finds what is left. A
     * family rotated at that moment (a transaction conflict) is no reason to fail: the transaction
     * is sent again. Throws NotFoundError(`missing`) when the condition of `last` fails.
     */
    async revokeFamiliesThen(
      families: readonly ActiveFamily[], last: TransactItem, missing: string,
      { deleting = [], now = new Date() }: { deleting?: readonly TransactItem[]; now?: Date } = {},
    ): Promise<void> {
      await revokeInChunks(families, { last, missing, deleting, now });
    },

    /**
     * Revokes the families as revokeFamiliesThen does, with nothing after them: none for no
     * families, else one transaction per 100. For a consent already deleted (see post-revoke-app).
     */
    async revokeFamilies(families: readonly ActiveFamily[], now = new Date()): Promise<void> {
      await revokeInChunks(families, { now });
    },

    /** The transaction item that forgets a user's consent to a client. */
    deleteConsentItem(userId: string, clientId: string): TransactItem {
      return { Delete: { TableName: table, Key: consentKey(userId, clientId) } };
    },
  };

  async function revokeInChunks(
    families: readonly ActiveFamily[],
    // Stryker disable next-line StringLiteral: `missing` is read only with `last`, and every caller that gives `last` gives it
    { last, missing = '', deleting = [], now }: { last?: TransactItem; missing?: string; deleting?: readonly TransactItem[]; now: Date },
  ): Promise<void> {
    const expiresAt = epochSeconds(now) + REVOKED_GRANT_SECONDS;
    const chunks: { items: TransactItem[]; families: number }[] = [];
    const add = (item: TransactItem, family: boolean) => {
      if (chunks.length === 0 || chunks.at(-1)!.items.length >= MAX_TRANSACTION_ITEMS) chunks.push({ items: [], families: 0 });
      chunks.at(-1)!.items.push(item);
      if (family) chunks.at(-1)!.families++;
    };
    // Families first in every chunk (sendRevocations counts them from the start). These end a grant
    // the user withdrew (or an application deleted): its consent's removal tells the application.
    for (const { familyId } of families) add({ Update: revokeFamilyUpdate(familyId, expiresAt, 'user_revoked') }, true);
    for (const item of deleting) add(item, false);
    if (last) add(last, false);
    for (const [i, chunk] of chunks.entries()) {
      await sendRevocations(chunk.items, chunk.families, last !== undefined && i === chunks.length - 1, missing);
    }
  }
}

/** A code as stored: in its family's item, indexed under the client as families are (so a revocation finds it). */
function codeItem(code: AuthorizationCode) {
  return { ...familyKey(code.familyId), ...familiesOfClientIndexKey(code.clientId, code.userId, code.familyId), ...code };
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
} as const satisfies RepoNeeds<GrantRepo>;
