import { randomUUID } from 'node:crypto';
import { GetCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { deviceKey } from '#shared/data/item-keys';
import { formatTimestamp } from '#shared/domain/time';
import type { Logger } from '#shared/log';
import { recordPresence, type PresenceDeps } from '#shared/presence/record-presence';
import { makeDevice } from '../support/factories';
import { countRequests } from '../support/count-requests';
import { useRepoTable } from '../support/repos';

// Presence from IoT Core's lifecycle events against DynamoDB Local: the events as AWS documents them
// ("Lifecycle events", AWS IoT Core Developer Guide), replayed, reordered and malformed.

/** A lifecycle event with every field AWS sends, as the presence rule's `SELECT *` hands it over. */
function lifecycle(type: 'connected' | 'disconnected', clientId: string, versionNumber: number, timestamp: number) {
  return {
    clientId, timestamp, eventType: type, sessionIdentifier: randomUUID(),
    principalIdentifier: 'a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a3b5', versionNumber,
    ...(type === 'connected' ? { ipAddress: '192.0.2.44' } : { clientInitiatedDisconnect: false, disconnectReason: 'MQTT_KEEP_ALIVE_TIMEOUT' }),
  };
}

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

describe('device presence from lifecycle events', () => {
  const { doc, table, repos } = useRepoTable();
  const { devices } = repos;
  const lines: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
  const record = (level: string) => (message: string, attributes?: Record<string, unknown>) => void lines.push({ level, message, attributes });
  const logger: Logger = { debug: record('DEBUG'), info: record('INFO'), warn: record('WARN'), error: record('ERROR'), getLevelName: () => 'INFO' };

  const deps: PresenceDeps = { devices, presence: repos.presence, logger };

  /** A new device of a new owner, shown disconnected; its owner and id. */
  async function newDevice() {
    const owner = randomUUID();
    const device = makeDevice({ connected: false, last_connection: '2026-01-01T00:00:00.000' });
    await devices.createDevice(owner, device);
    return { owner, id: device.id };
  }
  const storedItem = async (owner: string, id: string) => (await doc.send(new GetCommand({ TableName: table, Key: deviceKey(owner, id), ConsistentRead: true }))).Item;

  it('a connect shows the device connected since the event\'s time; its disconnect (a keep-alive timeout) shows it disconnected at once', async () => {
    const { owner, id } = await newDevice();
    const at = Date.UTC(2026, 10, 28, 9, 30, 0, 123);

    expect(await recordPresence(lifecycle('connected', id, 7, at), deps)).toBe('applied');
    expect(await devices.getOwnedDevice(owner, id)).toMatchObject({ connected: true, last_connection: formatTimestamp(new Date(at)) });

    expect(await recordPresence(lifecycle('disconnected', id, 7, at + 90_000), deps)).toBe('applied');
    expect(await devices.getOwnedDevice(owner, id)).toMatchObject({ connected: false, last_connection: formatTimestamp(new Date(at)) });
    // The public device is unchanged in shape: the ordering state stays on the item.
    expect(Object.keys((await devices.getOwnedDevice(owner, id))!)).not.toContain('presenceVersion');
  });

  it('in every order, with every event twice, connect 1, disconnect 1 and connect 2 leave the device connected since connect 2', async () => {
    const base = Date.UTC(2026, 10, 28, 10, 0, 0, 0);
    const orders = permutations(['c1', 'd1', 'c2'] as const);
    for (const order of orders) {
      const { owner, id } = await newDevice();
      const events = { c1: lifecycle('connected', id, 1, base), d1: lifecycle('disconnected', id, 1, base + 1000), c2: lifecycle('connected', id, 2, base + 2000) };
      for (const name of [...order, ...order]) await recordPresence(events[name], deps);
      expect(await devices.getOwnedDevice(owner, id), order.join(' ')).toMatchObject({ connected: true, last_connection: formatTimestamp(new Date(base + 2000)) });
    }
  });

  it('in every order of two whole connections, the device ends disconnected, last connected at the second one', async () => {
    const base = Date.UTC(2026, 10, 28, 11, 0, 0, 0);
    for (const order of permutations(['c1', 'd1', 'c2', 'd2'] as const)) {
      const { owner, id } = await newDevice();
      const events = {
        c1: lifecycle('connected', id, 1, base), d1: lifecycle('disconnected', id, 1, base + 1000),
        c2: lifecycle('connected', id, 2, base + 2000), d2: lifecycle('disconnected', id, 2, base + 3000),
      };
      for (const name of order) await recordPresence(events[name], deps);
      expect(await devices.getOwnedDevice(owner, id), order.join(' ')).toMatchObject({ connected: false, last_connection: formatTimestamp(new Date(base + 2000)) });
    }
  });

  it('costs the owner\'s look-up and one conditional write per event, applied or not; less for an event that names no device', async () => {
    const { id } = await newDevice();
    const counter = countRequests(doc);
    try {
      const at = Date.UTC(2026, 10, 28, 11, 45, 0, 0);
      const sent = async (input: unknown) => {
        counter.reset();
        await recordPresence(input, deps);
        return [...counter.operations];
      };
      expect(await sent(lifecycle('connected', id, 1, at))).toEqual(['QueryCommand', 'UpdateItemCommand']);
      expect(await sent(lifecycle('connected', id, 1, at))).toEqual(['QueryCommand', 'UpdateItemCommand']);
      expect(await sent(lifecycle('disconnected', id, 1, at + 1))).toEqual(['QueryCommand', 'UpdateItemCommand']);
      expect(await sent(lifecycle('connected', randomUUID(), 1, at))).toEqual(['QueryCommand']);
      expect(await sent({ eventType: 'connected' })).toEqual([]);
    } finally {
      counter.detach();
    }
  });

  it('a connect that arrives after its own disconnect leaves the device disconnected, last connected at that connect', async () => {
    const { owner, id } = await newDevice();
    const at = Date.UTC(2026, 10, 28, 11, 30, 0, 0);
    expect(await recordPresence(lifecycle('disconnected', id, 3, at + 5000), deps)).toBe('applied');
    expect(await recordPresence(lifecycle('connected', id, 3, at), deps)).toBe('late-connect');
    expect(await devices.getOwnedDevice(owner, id)).toMatchObject({ connected: false, last_connection: formatTimestamp(new Date(at)) });
    // Its duplicate changes nothing more.
    const before = await storedItem(owner, id);
    expect(await recordPresence(lifecycle('connected', id, 3, at), deps)).toBe('stale');
    expect(await storedItem(owner, id)).toEqual(before);
  });

  it('a repeated or late event writes nothing: no new seq, so no webhook event either', async () => {
    const { owner, id } = await newDevice();
    const at = Date.UTC(2026, 10, 28, 12, 0, 0, 0);
    await recordPresence(lifecycle('connected', id, 5, at), deps);
    const before = await storedItem(owner, id);

    lines.length = 0;
    expect(await recordPresence(lifecycle('connected', id, 5, at), deps)).toBe('stale');
    expect(await recordPresence(lifecycle('disconnected', id, 4, at - 5000), deps)).toBe('stale');
    expect(await recordPresence(lifecycle('connected', id, 3, at + 60_000), deps)).toBe('stale');
    expect(await storedItem(owner, id)).toEqual(before);
    expect(lines.map((l) => [l.message, l.attributes?.reason])).toEqual([['lifecycle event dropped', 'stale'], ['lifecycle event dropped', 'stale'], ['lifecycle event dropped', 'stale']]);
  });

  it('bad input is dropped with a log line naming why, and nothing is written', async () => {
    const { owner, id } = await newDevice();
    const before = await storedItem(owner, id);
    const good = lifecycle('connected', id, 1, Date.now());
    const cases: [unknown, string][] = [
      ['{"eventType":"connected"', 'not-an-object'],
      [[good], 'not-an-object'],
      [null, 'not-an-object'],
      [{ ...good, eventType: 'subscribed' }, 'unknown-event-type'],
      [{ ...good, clientId: 'sensor-7' }, 'client-id-not-a-device'],
      [{ ...good, clientId: undefined }, 'client-id-not-a-device'],
      [{ ...good, timestamp: '1764322200000' }, 'bad-timestamp'],
      [{ ...good, timestamp: 0 }, 'bad-timestamp'],
      [{ ...good, versionNumber: 1.5 }, 'bad-version-number'],
      [{ ...good, versionNumber: -1 }, 'bad-version-number'],
      [{ ...good, padding: 'x'.repeat(200_000) }, 'too-large'],
      [{ ...good, clientId: randomUUID() }, 'unknown-device'],
    ];
    for (const [input, reason] of cases) {
      lines.length = 0;
      expect(await recordPresence(input, deps), reason).toBe(reason);
      expect(lines, reason).toEqual([expect.objectContaining({ level: 'WARN', message: 'lifecycle event dropped', attributes: expect.objectContaining({ reason }) })]);
    }
    expect(await storedItem(owner, id)).toEqual(before);
    // The same event, well formed, is applied: the cases above were refused for what they changed.
    expect(await recordPresence(good, deps)).toBe('applied');
  });

  it('an event for a device deleted after its owner was found writes nothing and creates no item', async () => {
    const id = randomUUID();
    const ghostOwner = randomUUID();
    const found: PresenceDeps = { ...deps, devices: { findDeviceOwner: async () => ghostOwner } };
    expect(await recordPresence(lifecycle('connected', id, 1, Date.now()), found)).toBe('no-device');
    expect(await storedItem(ghostOwner, id)).toBeUndefined();
  });
});
