import type { Device } from '#shared/domain/device';
import { deviceChoiceOf, type DeviceChoice } from '#shared/domain/grant';
import { BadRequestError } from '#shared/errors';

// The device choice of a consent form (the consent page, the device page, a grant's page on the
// account page): one checkbox per device (`device_<id>`), one for the devices added later
// (`share_later`), and a marker (`choose_devices`) that says the form had the choice at all.

export const DEVICE_FIELD_PREFIX = 'device_';

/**
 * The choice the form made among the user's devices `owned`; undefined when the form had no
 * choice (a request without device scopes). A checkbox naming a device the user does not own is
 * refused (400), so nothing is recorded: a forged form cannot share or hide what is not the user's.
 */
export function deviceChoiceFromForm(form: Record<string, string>, owned: readonly Device[]): DeviceChoice | undefined {
  if (form.choose_devices !== '1') return undefined;
  const ids = owned.map((device) => device.id);
  const chosen = Object.keys(form).filter((name) => name.startsWith(DEVICE_FIELD_PREFIX)).map((name) => name.slice(DEVICE_FIELD_PREFIX.length));
  const foreign = chosen.find((id) => !ids.includes(id));
  if (foreign !== undefined) throw new BadRequestError(`The device ${foreign.slice(0, 40)} is not one of your devices.`);
  return deviceChoiceOf(ids, chosen, form.share_later === 'on');
}
