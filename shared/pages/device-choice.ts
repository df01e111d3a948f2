import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Device } from '#shared/domain/device';
import { deviceChoiceOf, type DeviceChoice } from '#shared/domain/grant';
import { BadRequestError, PayloadTooLargeError } from '#shared/errors';
import { formBytes, MAX_FORM_BYTES } from '#shared/http/form';
import { DEVICE_FIELD_PREFIX, DEVICE_MODE_FIELD } from '#shared/views/oauth-pages';

// The device choice of a consent form (the consent page, the device page, a grant's page on the
// account page): a mode (`devices`: `all`, every device now and later, which names no device; or
// `chosen`), then, read in mode `chosen`, one checkbox per device (`device_<id>`) and one for the
// devices added later (`share_later`); and a marker (`choose_devices`) that says the form had the
// choice at all. A browser sends every checked box, so the form grows with the owner's devices: its
// pages declare a larger body limit (DEVICE_CHOICE_FORM_BYTES), and once the owner's devices are
// read the body must fit what they justify (checkDeviceFormSize).

/** What one checked device adds to a form, at most: `device_<uuid>=on&` is 47 bytes, rounded up. */
export const DEVICE_FIELD_BYTES = 64;
/** The most devices a form's body limit makes room for: the pages are shown to work at 1,000. */
export const MAX_CHOOSABLE_DEVICES = 2000;
/**
 * The body limit the pages with the device choice declare (pageHandler `formBytes`): the page form
 * limit plus room for MAX_CHOOSABLE_DEVICES checked devices, so a body is bounded before anything is
 * read; checkDeviceFormSize then holds it to the owner's own count.
 */
export const DEVICE_CHOICE_FORM_BYTES = MAX_FORM_BYTES + MAX_CHOOSABLE_DEVICES * DEVICE_FIELD_BYTES;

/**
 * Refuses (413) a body larger than the page form limit plus DEVICE_FIELD_BYTES for each of the
 * user's devices `owned` (none: the form offered no choice, MAX_FORM_BYTES alone), so the larger
 * limit serves only an owner with that many devices. Call it before anything is written.
 */
export function checkDeviceFormSize(event: APIGatewayProxyEventV2, owned: readonly Device[] | undefined): void {
  const limit = MAX_FORM_BYTES + Math.min(owned?.length ?? 0, MAX_CHOOSABLE_DEVICES) * DEVICE_FIELD_BYTES;
  if (formBytes(event) > limit) throw new PayloadTooLargeError(limit);
}

/**
 * The choice the form made among the user's devices `owned`; undefined when the form had no
 * choice (a request without device scopes). Mode `all` needs no device field: every device, now and
 * later. A checkbox naming a device the user does not own is refused (400), in either mode, so
 * nothing is recorded: a forged form cannot share or hide what is not the user's. In mode `all`, a
 * form that sends device checkboxes but leaves some out (or the devices added later) contradicts
 * itself, as a browser's does when the user unchecked a box under "All my devices": refused (400)
 * rather than read as either.
 */
export function deviceChoiceFromForm(form: Record<string, string>, owned: readonly Device[]): DeviceChoice | undefined {
  if (form.choose_devices !== '1') return undefined;
  // A form without the mode (a page shown before it existed) chose with its checkboxes.
  const mode = form[DEVICE_MODE_FIELD] ?? 'chosen';
  if (mode !== 'all' && mode !== 'chosen') throw new BadRequestError('Choose either all your devices or only the devices you check.');
  const ids = owned.map((device) => device.id);
  const own = new Set(ids);
  const chosen = Object.keys(form).filter((name) => name.startsWith(DEVICE_FIELD_PREFIX)).map((name) => name.slice(DEVICE_FIELD_PREFIX.length));
  const foreign = chosen.find((id) => !own.has(id));
  if (foreign !== undefined) throw new BadRequestError(`The device ${foreign.slice(0, 40)} is not one of your devices.`);
  const later = form.share_later === 'on';
  if (mode === 'chosen') return deviceChoiceOf(ids, chosen, later);
  if (chosen.length > 0 && (chosen.length < own.size || !later)) {
    throw new BadRequestError('You chose all your devices but unchecked some: choose “Only the devices checked below” to share only those.');
  }
  return {};
}
