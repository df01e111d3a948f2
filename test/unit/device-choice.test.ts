import { describe, expect, it } from 'vitest';
import type { Device } from '#shared/domain/device';
import { allowedConsent, deviceChoiceOf, deviceVisible, editedConsent, type Consent } from '#shared/domain/grant';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { checkDeviceFormSize, DEVICE_CHOICE_FORM_BYTES, DEVICE_FIELD_BYTES, deviceChoiceFromForm } from '#shared/pages/device-choice';
import { MAX_FORM_BYTES } from '#shared/http/form';
import { PayloadTooLargeError } from '#shared/errors';

// The device choice of a consent (which of the user's devices an application sees) on its own: what it shares, how a form makes it,
// and how consents carry it; over HTTP and in Chromium, test/e2e/device-consent.test.ts.

const owned = ['a', 'b', 'c'];
const devices = owned.map((id) => ({ id, name: id, place: 'Home' }) as Device);
const consent: Consent = { userId: 'u', clientId: 'c', scopes: ['read_device', 'read_user'], grantedAt: '2026-11-27T00:00:00.000', grantGeneration: 'g' };

describe('deviceVisible', () => {
  it('shares every device without a choice, only the listed ones with onlyDevices, all but the listed ones with exceptDevices', () => {
    expect(deviceVisible(undefined, 'x')).toBe(true);
    expect(deviceVisible({}, 'x')).toBe(true);
    expect(deviceVisible({ onlyDevices: ['a'] }, 'a')).toBe(true);
    expect(deviceVisible({ onlyDevices: ['a'] }, 'b')).toBe(false);
    expect(deviceVisible({ onlyDevices: [] }, 'a')).toBe(false);
    expect(deviceVisible({ exceptDevices: ['a'] }, 'a')).toBe(false);
    expect(deviceVisible({ exceptDevices: ['a'] }, 'later')).toBe(true);
  });
});

describe('deviceChoiceOf', () => {
  it('lists the chosen devices when later ones are not shared, the left-out ones when they are, and nothing for all and later', () => {
    expect(deviceChoiceOf(owned, ['c', 'a', 'zz'], false)).toEqual({ onlyDevices: ['a', 'c'] });
    expect(deviceChoiceOf(owned, [], false)).toEqual({ onlyDevices: [] });
    expect(deviceChoiceOf(owned, ['a'], true)).toEqual({ exceptDevices: ['b', 'c'] });
    expect(deviceChoiceOf(owned, owned, true)).toEqual({});
  });
});

describe('deviceChoiceFromForm', () => {
  it('reads the checked devices and the later box; no choice without the marker', () => {
    expect(deviceChoiceFromForm({ device_a: 'on' }, devices)).toBeUndefined();
    expect(deviceChoiceFromForm({ choose_devices: '1', device_a: 'on', device_c: 'on' }, devices)).toEqual({ onlyDevices: ['a', 'c'] });
    expect(deviceChoiceFromForm({ choose_devices: '1', device_a: 'on', share_later: 'on' }, devices)).toEqual({ exceptDevices: ['b', 'c'] });
    expect(deviceChoiceFromForm({ choose_devices: '1', share_later: 'yes' }, devices)).toEqual({ onlyDevices: [] });
  });

  it('shares every device, now and later, in mode all, which needs no device field', () => {
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'all' }, devices)).toEqual({});
    // As a browser sends it: every box left checked.
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'all', device_a: 'on', device_b: 'on', device_c: 'on', share_later: 'on' }, devices)).toEqual({});
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'chosen', device_a: 'on' }, devices)).toEqual({ onlyDevices: ['a'] });
  });

  it('refuses mode all with boxes left unchecked (a contradiction, not guessed), or an unknown mode: 400', () => {
    const all = { choose_devices: '1', devices: 'all', share_later: 'on' };
    expect(() => deviceChoiceFromForm({ ...all, device_a: 'on', device_b: 'on' }, devices)).toThrow('choose “Only the devices checked below”');
    const { share_later: _later, ...withoutLater } = all;
    expect(() => deviceChoiceFromForm({ ...withoutLater, device_a: 'on', device_b: 'on', device_c: 'on' }, devices)).toThrow('unchecked some');
    expect(() => deviceChoiceFromForm({ choose_devices: '1', devices: 'some' }, devices)).toThrow('Choose either all your devices or only the devices you check.');
    expect(() => deviceChoiceFromForm({ ...all, device_stranger: 'on' }, devices)).toThrow('The device stranger is not one of your devices.');
  });

  it('reads the choice of an owner with 1,000 devices: all of them, all but one, or one', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ id: `d${i}`, name: `D${i}`, place: 'Home' }) as Device);
    const checked = Object.fromEntries(many.map((d) => [`device_${d.id}`, 'on']));
    const { device_d7: _left, ...allButOne } = checked;
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'all', ...checked, share_later: 'on' }, many)).toEqual({});
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'chosen', ...allButOne, share_later: 'on' }, many)).toEqual({ exceptDevices: ['d7'] });
    expect(deviceChoiceFromForm({ choose_devices: '1', devices: 'chosen', device_d999: 'on' }, many)).toEqual({ onlyDevices: ['d999'] });
  });

  it('refuses a device that is not the user\'s (400), naming it at most 40 characters long', () => {
    expect(() => deviceChoiceFromForm({ choose_devices: '1', device_a: 'on', device_stranger: 'on' }, devices)).toThrow('The device stranger is not one of your devices.');
    const long = 'x'.repeat(60);
    expect(() => deviceChoiceFromForm({ choose_devices: '1', [`device_${long}`]: 'on' }, devices)).toThrow(`The device ${'x'.repeat(40)} is not one of your devices.`);
  });
});

describe('consents carry the choice', () => {
  it('an allow records the form\'s choice, or keeps the previous one without a form\'s, one revision on', () => {
    const previous = { ...consent, onlyDevices: ['a'], revision: 2 };
    const base = { userId: 'u', clientId: 'c', requested: ['write_device'], grantedAt: 'now', freshGeneration: 'new' };
    expect(allowedConsent(previous, base)).toMatchObject({ onlyDevices: ['a'], revision: 3, grantGeneration: 'g' });
    const chosen = allowedConsent(previous, { ...base, devices: { exceptDevices: ['b'] } });
    expect(chosen).toMatchObject({ exceptDevices: ['b'], revision: 3 });
    expect(chosen).not.toHaveProperty('onlyDevices');
    const first = allowedConsent(undefined, { ...base, devices: {} });
    expect(first).not.toHaveProperty('revision');
    expect(first).not.toHaveProperty('onlyDevices');
    expect(first).not.toHaveProperty('exceptDevices');
  });

  it('an edit keeps only granted scopes among those checked, replaces the choice (or keeps it), and counts a revision', () => {
    const edited = editedConsent({ ...consent, exceptDevices: ['a'] }, { scopes: ['read_device', 'write_device'], devices: { onlyDevices: ['b'] }, at: 'then' });
    expect(edited).toEqual({ ...consent, scopes: ['read_device'], onlyDevices: ['b'], revision: 1, changedAt: 'then' });
    expect(editedConsent({ ...consent, onlyDevices: ['a'], revision: 4 }, { scopes: ['read_user'], at: 'then' }))
      .toEqual({ ...consent, scopes: ['read_user'], onlyDevices: ['a'], revision: 5, changedAt: 'then' });
  });
});

describe('checkDeviceFormSize', () => {
  const body = (bytes: number, isBase64Encoded = false) => {
    const text = `a=${'x'.repeat(bytes - 2)}`;
    return { body: isBase64Encoded ? Buffer.from(text).toString('base64') : text, isBase64Encoded, headers: {} } as unknown as APIGatewayProxyEventV2;
  };
  const many = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `d${i}` }) as Device);

  it('allows the page form limit, plus a checked box\'s bytes for each of the owner\'s devices, and answers 413 past it', () => {
    expect(() => checkDeviceFormSize(body(MAX_FORM_BYTES), undefined)).not.toThrow();
    expect(() => checkDeviceFormSize(body(MAX_FORM_BYTES + 1), undefined)).toThrow(PayloadTooLargeError);
    expect(() => checkDeviceFormSize(body(MAX_FORM_BYTES + 1), many(0))).toThrow(PayloadTooLargeError);
    const at1000 = MAX_FORM_BYTES + 1000 * DEVICE_FIELD_BYTES;
    expect(() => checkDeviceFormSize(body(at1000), many(1000))).not.toThrow();
    expect(() => checkDeviceFormSize(body(at1000 + 1), many(1000))).toThrow(`The request body is larger than ${at1000} bytes.`);
    expect(() => checkDeviceFormSize(body(at1000 + 1, true), many(1000))).toThrow(PayloadTooLargeError);
    // A few devices justify no large form.
    expect(() => checkDeviceFormSize(body(MAX_FORM_BYTES + 3 * DEVICE_FIELD_BYTES + 1), many(3))).toThrow(PayloadTooLargeError);
  });

  it('never allows more than the limit the pages declare, however many devices the owner has', () => {
    expect(() => checkDeviceFormSize(body(DEVICE_CHOICE_FORM_BYTES), many(5000))).not.toThrow();
    expect(() => checkDeviceFormSize(body(DEVICE_CHOICE_FORM_BYTES + 1), many(5000))).toThrow(PayloadTooLargeError);
    // A checked box of a UUID's device (`device_<uuid>=on&`) fits its share.
    expect(`device_${'0'.repeat(36)}=on&`.length).toBeLessThanOrEqual(DEVICE_FIELD_BYTES);
  });
});
