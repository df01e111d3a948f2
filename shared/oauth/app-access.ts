import type { BatchReader } from '#shared/data/batch-read';
import type { Uses, UsesDeclaration } from '#shared/data/uses';
import type { Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';

/** The repository operations authorizedApps uses (its function's grants: functions/needs.ts). */
export const AUTHORIZED_APPS_USES = { grants: ['listConsentsByUser'], clients: ['clientsRead'] } as const satisfies UsesDeclaration;

/**
 * The applications the user has authorized, each with the user's consent (the account page's list):
 * one Query (the consents), one BatchGetItem (their applications). An application deleted since
 * (its grants revoked with it) is no longer listed.
 */
export async function authorizedApps(
  repos: Uses<typeof AUTHORIZED_APPS_USES> & { batch: BatchReader },
  userId: string,
): Promise<{ consent: Consent; client: Client }[]> {
  const consents = await repos.grants.listConsentsByUser(userId);
  const [apps] = await repos.batch.read([repos.clients.clientsRead(consents.map((consent) => consent.clientId))]);
  return consents.flatMap((consent, i) => (apps[i] ? [{ consent, client: apps[i] }] : []));
}

/** The repository operations endAppAccess uses (its function's grants: functions/needs.ts). */
export const END_APP_ACCESS_USES = { grants: ['deleteConsent', 'grantsOf', 'revokeFamilies'] } as const satisfies UsesDeclaration;

/**
 * Ends one application's access to the user's account (the account page's revoke): the consent is
 * deleted first, ending its grant generation, so a code exchange or a rotation either committed
 * before it (its family is then found by the Query and revoked) or fails its check of the
 * generation, whatever the interleaving; then its active token families are revoked. One
 * DeleteItem, one Query and, when there are families, one transaction per up to 50 of them.
 * Returns the number of token families revoked.
 */
export async function endAppAccess(grants: Uses<typeof END_APP_ACCESS_USES>['grants'], userId: string, clientId: string): Promise<number> {
  await grants.deleteConsent(userId, clientId);
  const { families } = await grants.grantsOf(clientId, userId);
  await grants.revokeFamilies(families);
  return families.length;
}

/** The repository operations endEveryAppAccess uses, endAppAccess's among them. */
export const END_EVERY_APP_ACCESS_USES = [END_APP_ACCESS_USES, { grants: ['listConsentsByUser'] }] as const satisfies UsesDeclaration;

/**
 * Ends every application's access to the user's account, as the account page's revoke does for one:
 * for each application the user consented to, the consent is deleted first (ending its grant
 * generation, so no outstanding code is exchanged and no refresh token rotates after it), then its
 * active token families are revoked. One Query (the consents), then per application one DeleteItem,
 * one Query and, when it has families, one transaction per up to 50 of them. A failure part-way is
 * safe: a family whose consent is gone can no longer rotate, and a retry finishes the consents left.
 * Returns the number of token families revoked.
 */
export async function endEveryAppAccess(grants: Uses<typeof END_EVERY_APP_ACCESS_USES>['grants'], userId: string): Promise<number> {
  const consents = await grants.listConsentsByUser(userId);
  const revoked = await Promise.all(consents.map(({ clientId }) => endAppAccess(grants, userId, clientId)));
  return revoked.reduce((sum, n) => sum + n, 0);
}

/** The repository operations deleteApplication uses (its functions' grants: functions/needs.ts). */
export const DELETE_APPLICATION_USES = {
  grants: ['grantsOf', 'revokeFamiliesThen', 'deleteConsentItem'], clients: ['deleteClientItem'], webhooks: ['deleteSubscriptionItem'],
} as const satisfies UsesDeclaration;

/**
 * Deletes the developer's application and everything its users granted it: one Query (its active
 * token families and its users' consents, indexed together) and one transaction that revokes the
 * families, deletes the consents and the webhook subscription, and deletes the application (more
 * only beyond 100 items). A `NotFoundError` ("No such application.") when it is no longer there.
 * Returns the number of token families revoked.
 */
export async function deleteApplication(
  repos: Uses<typeof DELETE_APPLICATION_USES>,
  developerId: string,
  clientId: string,
): Promise<number> {
  const { grants, clients, webhooks } = repos;
  const { families, consentUserIds } = await grants.grantsOf(clientId);
  await grants.revokeFamiliesThen(families, clients.deleteClientItem(developerId, clientId), 'No such application.', {
    deleting: [...consentUserIds.map((userId) => grants.deleteConsentItem(userId, clientId)), webhooks.deleteSubscriptionItem(clientId)],
  });
  return families.length;
}
