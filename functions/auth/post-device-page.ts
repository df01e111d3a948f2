import { isDeviceRequest, UNKNOWN_CODE } from '#shared/oauth/device-approval';
import { decideDeviceRequest, devices, findDeviceRequest } from '#shared/runtime';
import { checkDeviceFormSize, DEVICE_CHOICE_FORM_BYTES, deviceChoiceFromForm } from '#shared/pages/device-choice';
import { MAX_FORM_BYTES, formBytes } from '#shared/http/form';
import { PayloadTooLargeError } from '#shared/errors';
import { asksForDevices } from '#shared/views/oauth-pages';
import { pageHandler } from '#shared/pages/page-handler';
import { deviceCodePage, deviceConsentPage, deviceDonePage } from '#shared/views/device-pages';

/**
 * POST /device (docs/api.md#device-page; RFC 8628 §3.3): the code the user typed. Without a
 * decision, the consent page of the request it names; with `decision` (allow or deny, from that
 * page), the decision, recorded in one transaction that uses the code up. Each submission is counted
 * against the entry limits before the code is looked up (device-approval.ts), so guessing is bounded.
 * A code that names nothing, or no longer anything, is the code form again with what went wrong.
 * The body limit makes room for a checkbox per device (shared/pages/device-choice.ts): a decision's
 * body must fit the user's own count (checked once it is counted and the devices are read).
 */
export const handler = pageHandler({
  form: true, csrf: true, formBytes: DEVICE_CHOICE_FORM_BYTES, session: 'required', loginReturn: '/device',
}, async ({ event, form, signedIn, viewer }) => {
  // Only a decision carries the device choice: the code form alone keeps the page form limit, before it is counted.
  if (form.decision === undefined && formBytes(event) > MAX_FORM_BYTES) throw new PayloadTooLargeError(MAX_FORM_BYTES);
  const signed = { email: signedIn.user.email, csrf: viewer.csrf, cookies: viewer.cookies };
  const userId = signedIn.user.id;
  const found = await findDeviceRequest(form.user_code, userId, event.requestContext.http.sourceIp);
  if (!isDeviceRequest(found)) return deviceCodePage({ ...signed, userCode: form.user_code?.slice(0, 32), error: found.problem, status: found.status });

  // A request for device scopes lets the user choose the devices, among their own (one Query).
  const owned = asksForDevices(found.code.scopes) ? await devices.listDevicesByOwner(userId) : undefined;
  checkDeviceFormSize(event, owned);
  if (form.decision !== 'allow' && form.decision !== 'deny') {
    return deviceConsentPage({
      ...signed, client: found.client, scopes: found.code.scopes, alreadyGranted: found.consent?.scopes ?? [], userCode: found.userCode,
      ...(owned ? { devices: { owned, choice: found.consent } } : {}),
    });
  }
  const allow = form.decision === 'allow';
  const chosen = allow && owned ? deviceChoiceFromForm(form, owned) : undefined;
  const outcome = await decideDeviceRequest(found, userId, { allow, ...(chosen ? { devices: chosen } : {}) });
  if (outcome === 'done') return deviceDonePage({ ...signed, clientName: found.client.name, allowed: allow });
  // Used or expired since it was read: the code form says so. The consent changed meanwhile (a
  // revocation, another tab): the consent page again, from what is stored now, at the next entry.
  if (outcome === 'not_pending') return deviceCodePage({ ...signed, error: UNKNOWN_CODE, status: 400 });
  return deviceCodePage({
    ...signed, userCode: found.userCode, status: 409,
    error: 'Your permissions for this application changed while you decided. Continue to see the request again.',
  });
});
