import { randomUUID } from 'node:crypto';
import type { Device } from '#shared/domain/device';

/** A valid device with a fresh id; any field can be overridden. */
export function makeDevice(overrides: Partial<Device> = {}): Device {
  return {
    id: randomUUID(),
    name: 'Living room',
    place: 'Paris apartment',
    version: '2.4.1',
    last_connection: '2026-01-02T03:04:05.678',
    active: false,
    connected: true,
    reference: '0a1b2c3d4e5f',
    latitude: 48.8566,
    longitude: 2.3522,
    sound: true,
    ...overrides,
  };
}
