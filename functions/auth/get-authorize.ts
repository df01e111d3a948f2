import { checkAuthorizationRequest, mayReuseConsent, repeatedParams } from '#shared/oauth/authorize-request';
import { asksForDevices, consentPage } from '#shared/views/oauth-pages';
import { devices, issueCode, issuer } from '#shared/runtime';
import { loginRedirect } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { BadRequestError } from '#shared/errors';
import { redirect } from '#shared/http/responses';

/**
 * GET /oauth/authorize (docs/api.md#authorization-request): checks the client and its exact
 * redirect URI first, then the login, then consent — asked once per user and application, and again
 * only for new scopes (every time for a native application's loopback or private-use redirect). The
 * session is optional to the page: the request is checked before a signed-out browser is sent to the
 * login page.
 * Client, session, user and consent are read in one BatchGetItem; a remembered consent then costs
 * one PutItem for the code, a consent page for device scopes one Query of the user's devices (the
 * choice of those the application may see, docs/api.md#authorization-request).
 */
export const handler = pageHandler({
  session: 'optional', reads: { client: (event) => event.queryStringParameters?.client_id, consent: true },
}, async ({ event, signedIn, client, consent, viewer }) => {
  const params = event.queryStringParameters ?? {};
  const check = checkAuthorizationRequest(params, client, issuer(), repeatedParams(event.rawQueryString));
  if (check.outcome === 'error-page') throw new BadRequestError(check.message);
  if (check.outcome === 'redirect') return redirect(check.location);

  if (!signedIn) return loginRedirect(`${event.rawPath}?${event.rawQueryString}`);
  const { request } = check;
  const granted = consent?.scopes ?? [];
  // A native application's loopback or private-use redirect asks every time (RFC 8252 §8.6, mayReuseConsent).
  if (consent && request.scopes.every((scope) => granted.includes(scope)) && mayReuseConsent(check.client, request.redirectUri)) {
    return redirect((await issueCode(request, issuer(), consent))!);
  }
  // A request for device scopes lets the user choose the devices (one Query of them).
  const choice = asksForDevices(request.scopes) ? { owned: await devices.listDevicesByOwner(signedIn.user.id), choice: consent } : undefined;
  return consentPage({
    client: check.client, request, params, alreadyGranted: granted, email: signedIn.user.email, csrf: viewer.csrf, cookies: viewer.cookies, devices: choice,
  });
});
