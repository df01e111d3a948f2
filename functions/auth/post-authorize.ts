import { AUTHORIZE_PARAMS, checkAuthorizationRequest, issueCode, redirectWith } from '#shared/auth/authorize-request';
import { grants, issuer } from '#shared/auth/runtime';
import { loginRedirect, readPage } from '#shared/auth/web';
import { formatTimestamp } from '#shared/domain/time';
import { BadRequestError } from '#shared/errors';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';

/**
 * POST /oauth/authorize — the consent decision: allow issues a code, deny answers access_denied.
 * One BatchGetItem (client, session, user, consent so far), then one transaction (consent, code).
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, client, consent } = await readPage(event, form.client_id, true);
  const check = checkAuthorizationRequest(form, client, issuer);
  if (check.outcome === 'error-page') throw new BadRequestError(check.message);
  if (check.outcome === 'redirect') return redirect(check.location, 303);

  const { request } = check;
  if (!signedIn) {
    const query = new URLSearchParams(AUTHORIZE_PARAMS.flatMap((name) => (form[name] ? [[name, form[name]]] : [])));
    return loginRedirect(`/oauth/authorize?${query}`, 303);
  }
  if (form.decision !== 'allow') {
    return redirect(redirectWith(request.redirectUri, {
      error: 'access_denied', error_description: 'The user denied the request.', state: request.state, iss: issuer,
    }), 303);
  }
  return redirect(await issueCode(grants, request, signedIn.user.id, issuer, {
    userId: signedIn.user.id,
    clientId: request.clientId,
    scopes: [...new Set([...(consent?.scopes ?? []), ...request.scopes])],
    grantedAt: formatTimestamp(new Date()),
  }), 303);
});
