import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '#shared/data/commands';
import type { Consent } from '#shared/domain/grant';
import { isPlausibleClientId } from '#shared/domain/client';
import type { BatchRead } from '#shared/data/batch-read';
import { isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import { consentKey, consentOfClientIndexKey, consentsOfUserKey, fromItem } from '#shared/data/item-keys';

// A user's consents to applications: read, listed, written on the condition that they still stand,
// and handed to other repositories' transactions (an allow with its code, a device's decision).
// Part of the grant repository (grant-repo.ts), which declares what each operation sends.

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

/** A consent as stored: in the user's partition, and indexed under its application (see consentOfClientIndexKey). */
const consentItem = (consent: Consent) => ({
  ...consentKey(consent.userId, consent.clientId), ...consentOfClientIndexKey(consent.clientId, consent.userId), ...consent,
});

/**
 * The transaction item that records a consent on condition that the stored one is still `previous`
 * (the one a decision was made on: same generation, or none at all), so that an allow racing a
 * revocation cannot bring the revoked grant (or its scopes) back.
 */
export function consentPutItem(table: string, consent: Consent, previous: Consent | undefined): TransactItem {
  const unchanged = previous ? grantCondition(previous.grantGeneration) : { ConditionExpression: 'attribute_not_exists(pk)' };
  return { Put: { TableName: table, Item: consentItem(consent), ...unchanged } };
}

/** The transaction item that checks that a user's consent to a client still stands under `generation`. */
export function consentStandsCheck(table: string, userId: string, clientId: string, generation: string | undefined): TransactItem {
  return { ConditionCheck: { TableName: table, Key: consentKey(userId, clientId), ...grantCondition(generation) } };
}

/**
 * The user's consent to a client, as part of a combined read (none without a user). Outside the
 * repository too, so that a page that only reads it (shared/pages/session.ts) does not bundle the repository.
 */
export function consentRead(userId: string | undefined, clientId: string | undefined): BatchRead<Consent | undefined> {
  return {
    keys: userId && isPlausibleClientId(clientId) ? [consentKey(userId, clientId)] : [],
    parse: ([item]) => (item ? fromItem<Consent>(item) : undefined),
  };
}

/** The consent operations of the grant repository (createGrantRepo). */
export function createConsentOperations({ doc, table }: RepoDeps) {
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

    /**
     * Writes an edited consent over `previous`, on condition that the stored one is still it: the same
     * grant generation and revision (a form shown before another change, or sent twice, finds
     * another). One PutItem; false, and nothing written, when the condition failed.
     */
    async replaceConsent(consent: Consent, previous: Consent): Promise<boolean> {
      const generation = grantCondition(previous.grantGeneration);
      const revision = previous.revision === undefined ? 'attribute_not_exists(revision)' : 'revision = :revision';
      try {
        await doc.send(new PutCommand({
          TableName: table, Item: consentItem(consent),
          ConditionExpression: `(${generation.ConditionExpression}) AND ${revision}`,
          ...(generation.ExpressionAttributeValues || previous.revision !== undefined
            ? { ExpressionAttributeValues: { ...generation.ExpressionAttributeValues, ...(previous.revision === undefined ? {} : { ':revision': previous.revision }) } }
            : {}),
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    async deleteConsent(userId: string, clientId: string): Promise<void> {
      await doc.send(new DeleteCommand({ TableName: table, Key: consentKey(userId, clientId) }));
    },

    /** The transaction item that forgets a user's consent to a client. */
    deleteConsentItem(userId: string, clientId: string): TransactItem {
      return { Delete: { TableName: table, Key: consentKey(userId, clientId) } };
    },
  };
}
