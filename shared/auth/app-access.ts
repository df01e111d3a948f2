import type { GrantRepo } from '#shared/data/grant-repo';

/**
 * Ends every application's access to the user's account, as the account page's revoke does for one
 * (for each application the user consented to: its active token families revoked, then the consent
 * deleted, in one transaction per up to 49 families). Idempotent: after a failure, a second call
 * finds what is left. One Query (the consents), then per application one Query and one transaction.
 * Returns the number of token families revoked.
 */
export async function endEveryAppAccess(grants: GrantRepo, userId: string): Promise<number> {
  const consents = await grants.listConsentsByUser(userId);
  const revoked = await Promise.all(consents.map(async ({ clientId }) => {
    const { families } = await grants.grantsOf(clientId, userId);
    await grants.revokeFamiliesThen(families, grants.deleteConsentItem(userId, clientId), 'No such application.');
    return families.length;
  }));
  return revoked.reduce((sum, n) => sum + n, 0);
}
