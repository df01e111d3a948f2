import { endAppAccess } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { isPlausibleClientId } from '#shared/domain/client';
import { redirect } from '#shared/http/responses';
import { countMetric, METRIC } from '#shared/metrics';

/**
 * POST /account/apps/{client_id}/revoke — forgets the consent, so the next authorization asks
 * again, then ends the application's refresh tokens for this user (endAppAccess): one BatchGetItem
 * (session, user), one DeleteItem (the consent), one Query (the user's active token families of the
 * application), and one transaction when there are any.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account' }, async ({ event, signedIn }) => {
  const clientId = event.pathParameters?.client_id;
  if (!isPlausibleClientId(clientId)) return redirect('/account', 303);
  countMetric(METRIC.grantsRevoked, await endAppAccess(signedIn.user.id, clientId));
  return redirect('/account', 303);
});
