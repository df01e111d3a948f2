import type { DocumentClient } from '#shared/data/document-client';
import { hashPassword } from '#shared/accounts/password';
import { hashSecret } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createUserRepo } from '#shared/data/user-repo';
import type { Device } from '#shared/domain/device';
import { formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';

/** Demo accounts: two users, each owning several devices, so cross-user isolation can be seen. */
export const DEMO_USERS = [
  {
    user: {
      id: '5b2c8f0e-1d3a-4c8e-9f4b-7a1e2d3c4b5a', firstname: 'Alice', lastname: 'Martin', gender: 2,
      email: 'alice@example.com', email_confirmed: true, avatar_url: '/avatars/5b2c8f0e-1d3a-4c8e-9f4b-7a1e2d3c4b5a.png',
    },
    password: 'alice-demo-password',
    devices: [
      { id: '0f6b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', name: 'Living room', place: 'Paris apartment', active: false, connected: true, sound: true, latitude: 48.8566, longitude: 2.3522, reference: '0a1b2c3d4e5f' },
      { id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', name: 'Garage', place: 'Paris apartment', active: true, connected: true, sound: false, latitude: 48.8570, longitude: 2.3530, reference: '0a1b2c3d4e60' },
      { id: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e', name: 'Chalet', place: 'Chamonix', active: true, connected: false, sound: true, latitude: 45.9237, longitude: 6.8694, reference: '0a1b2c3d4e61' },
    ],
  },
  {
    user: {
      id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', firstname: 'Bob', lastname: 'Durand', gender: 1,
      email: 'bob@example.com', email_confirmed: false, avatar_url: '/avatars/9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.png',
    },
    password: 'bob-demo-password',
    devices: [
      { id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f', name: 'Hallway', place: 'Lyon house', active: false, connected: true, sound: true, latitude: 45.764, longitude: 4.8357, reference: '1b2c3d4e5f60' },
      { id: '4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a', name: 'Office', place: 'Lyon house', active: false, connected: true, sound: false, latitude: 45.7645, longitude: 4.836, reference: '1b2c3d4e5f61' },
    ],
  },
] as const;

/** The demo application (a third-party app registered by Alice), served locally at :8080. */
export const DEMO_CLIENT = {
  clientId: 'demo-client',
  clientSecret: 'demo-client-secret-for-local-use-only-0123456789',
  name: 'Home Dashboard (demo)',
  description: 'Example third-party application: lists your devices and switches their away mode.',
  website: 'http://localhost:8080',
  redirectUris: ['http://localhost:8080/callback'],
} as const;

/**
 * A demo device application (a TV app registered by Bob): a native application (no secret) that uses
 * the device flow alone, so it has no redirect URI. `curl` plays the TV (README, "Devices without a browser").
 */
export const DEMO_TV_CLIENT = {
  clientId: 'demo-tv',
  name: 'Living-room TV (demo)',
  description: 'Example device application: shows your devices on the TV.',
  website: 'http://localhost:8080',
} as const;

/** Writes the demo data; safe to run again on a persisted table (existing items are kept). */
export async function seedDemoData(doc: DocumentClient, table: string, now = new Date()): Promise<void> {
  const users = createUserRepo({ doc, table });
  const devices = createDeviceRepo({ doc, table });
  const stamp = formatTimestamp(now);
  const clients = createClientRepo({ doc, table });
  for (const demo of DEMO_USERS) {
    if (await users.getUserById(demo.user.id)) continue;
    const user: User = { ...demo.user, creation_date: stamp, update_date: stamp };
    await users.createUser(user, await hashPassword(demo.password));
    for (const device of demo.devices) {
      const full: Device = { ...device, version: '2.4.1', last_connection: stamp };
      await devices.createDevice(demo.user.id, full);
    }
  }
  if (!(await clients.getClient(DEMO_CLIENT.clientId))) {
    const { clientSecret, ...registration } = DEMO_CLIENT;
    const alice = DEMO_USERS[0].user;
    await clients.createClient({
      ...registration,
      redirectUris: [...registration.redirectUris],
      secretHash: hashSecret(clientSecret),
      developerId: alice.id,
      developerName: `${alice.firstname} ${alice.lastname}`,
      createdAt: stamp,
    });
  }
  if (!(await clients.getClient(DEMO_TV_CLIENT.clientId))) {
    const bob = DEMO_USERS[1].user;
    await clients.createClient({
      ...DEMO_TV_CLIENT, clientType: 'public', deviceFlow: true, redirectUris: [],
      developerId: bob.id, developerName: `${bob.firstname} ${bob.lastname}`, createdAt: stamp,
    });
  }
}
