import { grants } from '#shared/auth/runtime';
import { loginRedirect, signedInUser } from '#shared/auth/web';
import { parseForm } from '#shared/http/form';
import { checkCsrf, redirect } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/**
 * POST /account/apps/{client_id}/revoke — ends the application's refresh tokens for this user
 * and forgets the consent, so the next authorization asks again.
 */
export const handler = pageHandler(async (event) => {
  checkCsrf(event, parseForm(event));
  const signedIn = await signedInUser(event);
  if (!signedIn) return loginRedirect('/account', 303);
  const clientId = event.pathParameters?.client_id ?? '';
  await grants.revokeFamiliesOf(clientId, signedIn.user.id);
  await grants.deleteConsent(signedIn.user.id, clientId);
  return redirect('/account', 303);
});
