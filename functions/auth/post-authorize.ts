import { randomUUID } from 'node:crypto';
import { checkAuthorizationRequest, issueCode, redirectWith } from '#shared/oauth/authorize-request';
import { grants, issuer } from '#shared/runtime';
import { loginRedirect, readPage } from '#shared/accounts/session';
import { allowedConsent } from '#shared/domain/grant';
import { formatTimestamp } from '#shared/domain/time';
import { BadRequestError } from '#shared/errors';
import { checkCsrf } from '#shared/http/csrf';
import { parseForm } from '#shared/http/form';
import { pageHandler } from '#shared/http/page-handler';
import { redirect } from '#shared/http/responses';
import { AUTHORIZE_PARAMS } from '#shared/domain/authorization-request';

/**
 * POST /oauth/authorize — the consent decision: allow issues a code, deny answers access_denied.
 * One BatchGetItem (client, session, user, consent so far), then one transaction (consent, code)
 * on condition that the consent is still the one read; if a revocation or another decision changed it
 * in between, nothing is written and the browser is sent back to GET /oauth/authorize.
 */
export const handler = pageHandler(async (event) => {
  const form = parseForm(event);
  checkCsrf(event, form);
  const { signedIn, client, consent } = await readPage(event, form.client_id, true);
  const check = checkAuthorizationRequest(form, client, issuer());
  if (check.outcome === 'error-page') throw new BadRequestError(check.message);
  if (check.outcome === 'redirect') return redirect(check.location, 303);

  const { request } = check;
  if (!signedIn) {
    return loginRedirect(`/oauth/authorize?${authorizeQuery(form)}`, 303);
  }
  if (form.decision !== 'allow') {
    return redirect(redirectWith(request.redirectUri, {
      error: 'access_denied', error_description: 'The user denied the request.', state: request.state, iss: issuer(),
    }), 303);
  }
  const allowed = allowedConsent(consent, {
    userId: signedIn.user.id, clientId: request.clientId, requested: request.scopes, grantedAt: formatTimestamp(new Date()), freshGeneration: randomUUID(),
  });
  const location = await issueCode(grants, request, issuer(), allowed, { previous: consent });
  // The consent changed while the user decided (revoked, or allowed in another tab): the
  // authorization request starts again from what is stored now.
  return redirect(location ?? `/oauth/authorize?${authorizeQuery(form)}`, 303);
});

const authorizeQuery = (form: Record<string, string>) =>
  new URLSearchParams(AUTHORIZE_PARAMS.flatMap((name) => (form[name] ? [[name, form[name]]] : [])));
