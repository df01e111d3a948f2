import { randomUUID } from 'node:crypto';
import { hashSecret, randomToken } from '#shared/secrets';
import type { Client } from '#shared/domain/client';
import type { Device } from '#shared/domain/device';
import type { User } from '#shared/domain/user';

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

/** A valid user with a fresh id, named `firstname lastname`, the address made from the first name; any field can be overridden. */
export function userNamed(firstname: string, lastname: string, overrides: Partial<User> = {}): User {
  const id = randomUUID();
  return {
    id, firstname, lastname, avatar_url: `/avatars/${id}.png`, gender: 0, email: `${firstname.toLowerCase()}-${id}@example.com`, email_confirmed: true,
    creation_date: '2026-01-02T03:04:05.678', update_date: '2026-01-02T03:04:05.678', ...overrides,
  };
}

/** A valid confidential application with a fresh id, a random secret's hash and a random developer; any field can be overridden. */
export function makeClient(overrides: Partial<Client> = {}): Client {
  return {
    clientId: randomUUID(), secretHash: hashSecret(randomToken()), name: 'App', description: 'An application.', website: 'https://app.example.test',
    redirectUris: ['https://app.example.test/cb'], developerId: randomUUID(), developerName: 'Dev', createdAt: '2026-11-01T00:00:00.000',
    ...overrides,
  };
}
