import { TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, MAX_TRANSACTION_ITEMS, queryAll, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { familyKey, grantsOfClientIndexKey, isConsentKey, isFamilyKey } from '#shared/data/item-keys';
import { REVOKED_GRANT_SECONDS, type RevocationReason } from '#shared/domain/grant';
import { epochSeconds } from '#shared/domain/time';
import { NotFoundError } from '#shared/errors';

// The grant repository's revocations (grant-repo.ts spreads them into it): one family at a time, or
// every family of a client or of one user of it, with the deletion that ends the grant.

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

/** The states of a family's item that a revocation ends: the family, its code, its device authorization (not a denied one). */
const LIVE_STATUSES = new Set(['active', 'pending', 'device_pending', 'device_approved']);

/** Attempts of one revocation transaction that met a concurrent write (a rotation) or a family gone. */
const REVOCATION_ATTEMPTS = 3;

/** The revocation methods of the grant repository (its GRANT_REPO_OPERATIONS declares their actions). */
export function createGrantRevocations({ doc, table }: RepoDeps) {
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

  return {
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
      const items = await queryAll({ doc, table }, {
        IndexName: 'gsi1',
        KeyConditionExpression: gsi1skPrefix ? 'gsi1pk = :pk AND begins_with(gsi1sk, :user)' : 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': gsi1pk, ...(gsi1skPrefix ? { ':user': gsi1skPrefix } : {}) },
      });
      const grants: ClientGrants = { families: [], consentUserIds: [] };
      for (const item of items) {
        if (isFamilyKey(item)) {
          // A code not yet exchanged, and a device authorization not yet redeemed, are revoked too: they can then no longer become a grant.
          if (LIVE_STATUSES.has(String(item.status))) grants.families.push({ familyId: String(item.familyId) });
        // Stryker disable next-line ConditionalExpression: only families and consents are indexed under an application (keys.ts)
        } else if (isConsentKey(item)) {
          grants.consentUserIds.push(String(item.userId));
        }
      }
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
  };
}
