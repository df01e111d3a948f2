import { PASSKEY_REFUSALS } from '#shared/accounts/passkeys';
import { securityPage } from '#shared/views/security-pages';
import { registerPasskey, relyingParty } from '#shared/runtime';
import { pageHandler } from '#shared/pages/page-handler';
import { securityState } from '#shared/pages/security';
import { redirect } from '#shared/http/responses';

/**
 * POST /account/security/passkeys — adds the passkey the page's script just had the browser make
 * (`response`), named `name` (registerPasskey: the challenge taken, the answer verified, then one
 * transaction). Added: 303 to GET /account/security?done=passkey-added. Refused, or sent without a
 * browser answer (no JavaScript, no WebAuthn): the security page with the reason (400), nothing written.
 */
export const handler = pageHandler({ form: true, csrf: true, session: 'required', loginReturn: '/account/security' }, async ({ form, signedIn, viewer }) => {
  const refuse = async (passkeyError: string) =>
    securityPage(viewer, { ...(await securityState(signedIn.user.id, signedIn.sessionId)), passkeyError, passkeyName: form.name, status: 400 });
  if (!form.response) return refuse('Adding a passkey needs a browser that supports passkeys, with JavaScript on.');
  const result = await registerPasskey(relyingParty(), signedIn.user, { response: form.response, name: form.name ?? '' }, new Date());
  if (result.outcome === 'refused') return refuse(PASSKEY_REFUSALS[result.refusal]);
  return redirect('/account/security?done=passkey-added', 303);
});
