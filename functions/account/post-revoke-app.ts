import { grants } from '#shared/auth/runtime';
import { loginRedirect, signedInUser } from '#shared/auth/web';
import { isPlausibleClientId } from '#shared/domain/client';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';
import { countMetric, METRIC } from '#shared/metrics';

/**
 * POST /account/apps/{client_id}/revoke — forgets the consent, so the next authorization asks
 * again, then ends the application's refresh tokens for this user: one BatchGetItem (session,
 * user), one DeleteItem (the consent), one Query (the user's active token families of the
 * application), and one transaction when there are any. The consent goes first: it ends its grant
 * generation, so a code exchange or a rotation either committed before it (its family is then
 * found by the Query and revoked) or fails its check of the generation, whatever the interleaving.
 */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const signedIn = await signedInUser(event);
  if (!signedIn) return loginRedirect('/account', 303);
  const clientId = event.pathParameters?.client_id;
  if (!isPlausibleClientId(clientId)) return redirect('/account', 303);
  await grants.deleteConsent(signedIn.user.id, clientId);
  const { families } = await grants.grantsOf(clientId, signedIn.user.id);
  await grants.revokeFamilies(families);
  countMetric(METRIC.grantsRevoked, families.length);
  return redirect('/account', 303);
});
