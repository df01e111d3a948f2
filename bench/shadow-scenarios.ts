import { randomUUID } from 'node:crypto';
import type { DocumentClient } from '#shared/data/document-client';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { deviceKey } from '#shared/data/item-keys';
import type { Device } from '#shared/domain/device';
import { formatTimestamp } from '#shared/domain/time';
import type { step } from '#shared/bench-floor';
import { streamModifyEvent } from './events.ts';
import type { Scenario } from './scenarios.ts';

/** What the device shadow's scenarios need of the benchmark's: the preparation client, a user of their own, the floor steps, a pool. */
export interface ShadowScenarioKit {
  deps: { doc: DocumentClient; table: string };
  user(): Promise<{ id: string }>;
  step: typeof step;
  pool<T>(n: number, width: number, make: () => Promise<T>): Promise<T[]>;
}

/**
 * The device shadow's two functions without an HTTP route. The desired state's scenario is a rename
 * (not a device-side change: no shadow call), since the benchmark runs no IoT data plane; the path
 * from a PUT to the device's delta is measured end to end by `npm run bench:shadow`.
 */
export function shadowScenarios({ deps, user, step, pool }: ShadowScenarioKit): Scenario[] {
  const device = async (owner: { id: string }) => {
    const made: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date(0)), connected: false };
    await createDeviceRepo(deps).createDevice(owner.id, made);
    return made;
  };
  return [
    {
      name: 'record-shadow-report (reported)', fn: 'record-shadow-report', expectResult: { outcome: 'applied' }, requestBudget: 2,
      floor: [step.query('device', 1, 'gsi1'), step.update('device')],
      minReason: 'a shadow documents message of a device\'s report (sound off, new firmware), naming the device by its thing alone: Query(GSI1: '
        + 'the device\'s owner, whose partition holds the device) + UpdateItem(the reported fields, on condition that the shadow version is newer than the last applied)',
      events: async (n) => {
        const owner = await user();
        return pool(n, 16, async () => {
          const made = await device(owner);
          return {
            thingName: made.id, timestamp: Math.floor(Date.now() / 1000),
            previous: { state: { reported: { sound: true, version: '2.4.1' } }, metadata: {}, version: 1 },
            current: { state: { reported: { sound: false, version: '2.5.0' } }, metadata: {}, version: 2 },
          };
        });
      },
    },
    {
      name: 'sync-desired-state (rename)', fn: 'sync-desired-state', expectResult: { written: 0, superseded: 0 },
      floor: [],
      minReason: 'a stream batch of one rename (a cloud-only field): read, and no shadow call; a command\'s path (GetThingShadow + UpdateThingShadow) is in bench:shadow',
      events: async (n) => {
        const owner = await user();
        const made = await device(owner);
        const item = { ...deviceKey(owner.id, made.id), ...made, seq: 1 };
        return Array.from({ length: n }, () => streamModifyEvent(item, { ...item, name: 'Renamed', seq: 2 }));
      },
    },
  ];
}
