import type { BatchReader } from '#shared/data/batch-read';
import type { ClientRepo } from '#shared/data/client-repo';
import type { GrantRepo } from '#shared/data/grant-repo';
import type { WebhookRepo } from '#shared/data/webhook-repo';
import type { Client } from '#shared/domain/client';
import type { Consent } from '#shared/domain/grant';

/**
 * The applications the user has authorized, each with the user's consent (the account page's list):
 * one Query (the consents), one BatchGetItem (their applications). An application deleted since
 * (its grants revoked with it) is no longer listed.
 */
export async function authorizedApps(
  repos: { batch: BatchReader; clients: Pick<ClientRepo, 'clientsRead'>; grants: Pick<GrantRepo, 'listConsentsByUser'> },
  userId: string,
): Promise<{ consent: Consent; client: Client }[]> {
  const consents = await repos.grants.listConsentsByUser(userId);
  const [apps] = await repos.batch.read([repos.clients.clientsRead(consents.map((consent) => consent.clientId))]);
  return consents.flatMap((consent, i) => (apps[i] ? [{ consent, client: apps[i] }] : []));
}

/**
 * Ends one application's access to the user's account (the account page's revoke): the consent is
 * deleted first, ending its grant generation, so a code exchange or a rotation either committed
 * before it (its family is then found by the Query and revoked) or fails its check of the
 * generation, whatever the interleaving; then its active token families are revoked. One
 * DeleteItem, one Query and, when there are families, one transaction per up to 50 of them.
 * Returns the number of token families revoked.
 */
export async function endAppAccess(grants: GrantRepo, userId: string, clientId: string): Promise<number> {
  await grants.deleteConsent(userId, clientId);
  const { families } = await grants.grantsOf(clientId, userId);
  await grants.revokeFamilies(families);
  return families.length;
}

/**
 * Ends every application's access to the user's account, as the account page's revoke does for one:
 * for each application the user consented to, the consent is deleted first (ending its grant
 * generation, so no outstanding code is exchanged and no refresh token rotates after it), then its
 * active token families are revoked. One Query (the consents), then per application one DeleteItem,
 * one Query and, when it has families, one transaction per up to 50 of them. A failure part-way is
 * safe: a family whose consent is gone can no longer rotate, and a retry finishes the consents left.
 * Returns the number of token families revoked.
 */
export async function endEveryAppAccess(grants: GrantRepo, userId: string): Promise<number> {
  const consents = await grants.listConsentsByUser(userId);
  const revoked = await Promise.all(consents.map(({ clientId }) => endAppAccess(grants, userId, clientId)));
  return revoked.reduce((sum, n) => sum + n, 0);
}

/**
 * Deletes the developer's application and everything its users granted it: one Query (its active
 * token families and its users' consents, indexed together) and one transaction that revokes the
 * families, deletes the consents and the webhook subscription, and deletes the application (more
 * only beyond 100 items). A `NotFoundError` ("No such application.") when it is no longer there.
 * Returns the number of token families revoked.
 */
export async function deleteApplication(
  repos: { grants: GrantRepo; clients: Pick<ClientRepo, 'deleteClientItem'>; webhooks: Pick<WebhookRepo, 'deleteSubscriptionItem'> },
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
