import type { GrantRepo } from '#shared/data/grant-repo';

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
  const revoked = await Promise.all(consents.map(async ({ clientId }) => {
    await grants.deleteConsent(userId, clientId);
    const { families } = await grants.grantsOf(clientId, userId);
    await grants.revokeFamilies(families);
    return families.length;
  }));
  return revoked.reduce((sum, n) => sum + n, 0);
}
