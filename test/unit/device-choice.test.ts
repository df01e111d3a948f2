import { describe, expect, it } from 'vitest';
import type { Device } from '#shared/domain/device';
import { allowedConsent, deviceChoiceOf, deviceVisible, editedConsent, type Consent } from '#shared/domain/grant';
import { deviceChoiceFromForm } from '#shared/pages/device-choice';

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
