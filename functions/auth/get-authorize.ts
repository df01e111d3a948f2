import { checkAuthorizationRequest, issueCode, repeatedParams } from '#shared/auth/authorize-request';
import { consentPage } from '#shared/auth/pages';
import { clients, grants, issuer } from '#shared/auth/runtime';
import { loginRedirect, secure, signedInUser } from '#shared/auth/web';
import { BadRequestError } from '#shared/errors';
import { csrfToken, redirect } from '#shared/http/html';
import { pageHandler } from '#shared/http/page-handler';

/**
 * GET /oauth/authorize (SPEC.md §5.3): checks the client and its exact redirect URI first, then
 * the login, then consent — asked once per user and application, and again only for new scopes.
 */
export const handler = pageHandler(async (event) => {
  const params = event.queryStringParameters ?? {};
  const check = await checkAuthorizationRequest(params, clients, issuer, repeatedParams(event.rawQueryString));
  if (check.outcome === 'error-page') throw new BadRequestError(check.message);
  if (check.outcome === 'redirect') return redirect(check.location);

  const signedIn = await signedInUser(event);
  if (!signedIn) return loginRedirect(`${event.rawPath}?${event.rawQueryString}`);
  const { request, client } = check;
  const consent = await grants.getConsent(signedIn.user.id, client.clientId);
  const granted = consent?.scopes ?? [];
  if (request.scopes.every((scope) => granted.includes(scope))) {
    return redirect(await issueCode(grants, request, signedIn.user.id, issuer));
  }
  const { token, cookies } = csrfToken(event, secure);
  return consentPage({ client, request, params, alreadyGranted: granted, email: signedIn.user.email, csrf: token, cookies });
});
