import { randomUUID } from 'node:crypto';
import { checkAuthorizationRequest, redirectWith } from '#shared/oauth/authorize-request';
import { devices, issueCode, issuer } from '#shared/runtime';
import { checkDeviceFormSize, DEVICE_CHOICE_FORM_BYTES, deviceChoiceFromForm } from '#shared/pages/device-choice';
import { asksForDevices } from '#shared/views/oauth-pages';
import { loginRedirect } from '#shared/pages/session';
import { pageHandler } from '#shared/pages/page-handler';
import { allowedConsent } from '#shared/domain/grant';
import { formatTimestamp } from '#shared/domain/time';
import { BadRequestError } from '#shared/errors';
import { redirect } from '#shared/http/responses';
import { AUTHORIZE_PARAMS } from '#shared/domain/authorization-request';

/**
 * POST /oauth/authorize — the consent decision: allow issues a code, deny answers access_denied.
 * One BatchGetItem (client, session, user, consent so far), for device scopes one Query of the
 * user's devices (the choice names only the user's own), then one transaction (consent, code)
 * on condition that the consent is still the one read. The form's body limit makes room for a
 * checkbox per device (shared/pages/device-choice.ts): an allow's body must fit the user's own
 * count; a deny reads nothing more and writes nothing; if a revocation or another decision changed it
 * in between, nothing is written and the browser is sent back to GET /oauth/authorize. The session
 * is optional to the page: the request is checked before a signed-out browser is sent to the login page.
 */
export const handler = pageHandler({
  form: true, csrf: true, formBytes: DEVICE_CHOICE_FORM_BYTES, session: 'optional', reads: { client: (_, form) => form.client_id, consent: true },
}, async ({ event, form, signedIn, client, consent }) => {
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
  // The devices chosen on the page (a request for device scopes), among the user's own (one Query);
  // the form may be as large as those devices make it, no larger.
  const owned = asksForDevices(request.scopes) ? await devices.listDevicesByOwner(signedIn.user.id) : undefined;
  checkDeviceFormSize(event, owned);
  const chosen = owned ? deviceChoiceFromForm(form, owned) : undefined;
  const allowed = allowedConsent(consent, {
    userId: signedIn.user.id, clientId: request.clientId, requested: request.scopes, grantedAt: formatTimestamp(new Date()), freshGeneration: randomUUID(),
    ...(chosen ? { devices: chosen } : {}),
  });
  const location = await issueCode(request, issuer(), allowed, { previous: consent });
  // The consent changed while the user decided (revoked, or allowed in another tab): the
  // authorization request starts again from what is stored now.
  return redirect(location ?? `/oauth/authorize?${authorizeQuery(form)}`, 303);
});

const authorizeQuery = (form: Record<string, string>) =>
  new URLSearchParams(AUTHORIZE_PARAMS.flatMap((name) => (form[name] ? [[name, form[name]]] : [])));
