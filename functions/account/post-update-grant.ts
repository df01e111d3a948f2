import { devices, grants } from '#shared/runtime';
import { pageHandler, thisPage } from '#shared/pages/page-handler';
import { checkDeviceFormSize, DEVICE_CHOICE_FORM_BYTES, deviceChoiceFromForm } from '#shared/pages/device-choice';
import { editedConsent } from '#shared/domain/grant';
import { formatTimestamp } from '#shared/domain/time';
import { NotFoundError } from '#shared/errors';
import { redirect } from '#shared/http/responses';
import { grantPage } from '#shared/views/grant-pages';
import { asksForDevices } from '#shared/views/oauth-pages';

const SCOPE_FIELD = 'scope_';

/**
 * POST /account/apps/{client_id} — changes a grant (docs/api.md#managing-a-grant): keeps the
 * checked scopes (at least one; none is added here) and records the devices chosen. The form
 * carries the consent's revision; the write is one PutItem on condition that the stored consent is
 * still that revision of that grant generation, so a stale or replayed form changes nothing (409,
 * the page as it now is). The application hears of the change (grant.updated, from the table's
 * stream). One BatchGetItem (session, user, application, consent), one Query of the user's devices
 * (a grant with device scopes: the choice names only the user's own), one PutItem. The body limit
 * makes room for a checkbox per device: the body must fit the user's own count
 * (shared/pages/device-choice.ts).
 */
export const handler = pageHandler({
  form: true, csrf: true, formBytes: DEVICE_CHOICE_FORM_BYTES, session: 'required',
  reads: { client: (event) => event.pathParameters?.client_id, consent: true }, loginReturn: thisPage,
}, async ({ event, form, signedIn, client, consent, viewer }) => {
  if (!client || !consent) throw new NotFoundError('You have not authorized this application.');
  const owned = asksForDevices(consent.scopes) ? await devices.listDevicesByOwner(signedIn.user.id) : undefined;
  checkDeviceFormSize(event, owned);
  const page = (error: string, status: number) => grantPage(viewer, { client, consent, owned, error, status });
  if (form.revision !== String(consent.revision ?? 0)) {
    return page('This access was changed since the page was shown (in another tab, or by the application). Here is what it is now: make your change again.', 409);
  }
  const scopes = Object.keys(form).filter((name) => name.startsWith(SCOPE_FIELD)).map((name) => name.slice(SCOPE_FIELD.length));
  const kept = consent.scopes.filter((scope) => scopes.includes(scope));
  if (kept.length === 0) return page('Keep at least one permission, or revoke the access altogether.', 400);
  const chosen = owned ? deviceChoiceFromForm(form, owned) : undefined;
  const edited = editedConsent(consent, { scopes: kept, ...(chosen ? { devices: chosen } : {}), at: formatTimestamp(new Date()) });
  if (!await grants.replaceConsent(edited, consent)) {
    return page('This access was changed since the page was shown. Here is what it is now: make your change again.', 409);
  }
  return redirect(`/account/apps/${encodeURIComponent(client.clientId)}`, 303);
});
