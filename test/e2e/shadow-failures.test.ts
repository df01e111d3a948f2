import { randomUUID } from 'node:crypto';
import { GetCommand } from '#shared/data/commands';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { DESIRED_STATE_SOURCE } from '#local/device-shadow';
import { runAsFunction } from '#local/invocation-context';
import { DEMO_USERS } from '#local/seed';
import { createDeviceRepo } from '#shared/data/device-repo';
import { deviceKey } from '#shared/data/item-keys';
import type { StreamBatchFailure } from '#shared/webhooks/stream-failures';
import { tokenFor, useTable, useTestService } from '../support/service';
import { connectShadowDevice } from '../support/shadow-device';
import { makeDevice } from '../support/factories';

// A PUT the table accepted is never lost on its way to the device's shadow: with a data plane that
// fails, the stream's batch is handed to the desired-state function again until it is written; one
// that keeps failing ends, after the mapping's retries, in the failures queue (as Lambda's on-failure
// record: the stream range to replay), which the stack alarms on (test/infra/device-shadow.test.ts).
const [ALICE] = DEMO_USERS;

describe('desired state on a failing shadow service', () => {
  const service = useTestService({ webhooks: false, iot: true });
  const { doc } = useTable(service, { requestTimeoutMs: 10_000 });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  async function newDevice() {
    const device = makeDevice({ sound: true, active: false });
    await createDeviceRepo({ doc, table: service.tableName }).createDevice(ALICE.user.id, device);
    return device;
  }
  const put = async (id: string, body: unknown) => {
    const token = await tokenFor(service, ALICE.user.id, ['write_device']);
    const res = await fetch(`${service.apiUrl}/devices/${id}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(204);
  };
  const updatesOf = (id: string) => service.iot!.dataPlane.calls.filter((call) => call === `UpdateThingShadow ${id}`).length;

  it('a shadow stand-in that fails twice: the command still reaches the device, after two failed writes', async () => {
    const device = await newDevice();
    const creds = await service.iot!.ca.issue(device.id);
    const thing = await connectShadowDevice(creds, service.iot!.ca.certPem, service.iot!.broker.port, { sound: true, active: false });
    stops.push(() => thing.disconnect().catch(() => undefined));
    // Both failures land on the first invocation (the SDK tries a call twice): the stream must hand the batch over again.
    service.iot!.dataPlane.failUpdates(2);
    await put(device.id, { sound: false });
    await thing.reaches({ sound: false });
    expect(updatesOf(device.id)).toBe(3);
    expect(service.iot!.desiredState.failures.bodies()).toEqual([]);
  });

  it('a shadow service that keeps failing: after the mapping\'s retries, the batch\'s range is in the failures queue, and the next command goes through', async () => {
    const device = await newDevice();
    service.iot!.dataPlane.failUpdates(1000);
    await put(device.id, { active: true });
    const until = Date.now() + 50_000;
    while (service.iot!.desiredState.failures.bodies().length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const [body] = service.iot!.desiredState.failures.bodies();
    const failure = JSON.parse(body!) as StreamBatchFailure;
    expect(failure.requestContext.condition).toBe('RetryAttemptsExhausted');
    expect(failure.DDBStreamBatchInfo.batchSize).toBe(1);
    // The stand-in healthy again: the reader went on past the failed record.
    service.iot!.dataPlane.failUpdates(0);
    await put(device.id, { sound: false });
    await service.iot!.settled();
    expect(service.iot!.broker.shadows.get(device.id)).toMatchObject({ ok: { state: { desired: { sound: false, active: true } } } });
  }, 90_000);

  it('a repeated or stale stream record (a retry, a replay) never overwrites a newer command in the shadow', async () => {
    const device = await newDevice();
    await put(device.id, { sound: false });
    await service.iot!.settled();
    const { Item: older } = await doc.send(new GetCommand({ TableName: service.tableName, Key: deviceKey(ALICE.user.id, device.id) }));
    await put(device.id, { sound: true });
    await service.iot!.settled();
    const { Item: newer } = await doc.send(new GetCommand({ TableName: service.tableName, Key: deviceKey(ALICE.user.id, device.id) }));
    const record = (item: Record<string, unknown>) => ({
      eventID: randomUUID(), eventName: 'MODIFY', eventSource: 'aws:dynamodb',
      dynamodb: { ApproximateCreationDateTime: Math.floor(Date.now() / 1000), NewImage: marshall(item), OldImage: marshall({ ...item, seq: Number(item.seq) - 1 }) },
    });
    const replay = (item: Record<string, unknown>) => runAsFunction({ fn: 'sync-desired-state', ...DESIRED_STATE_SOURCE }, async () => {
      const { handler } = await import('#functions/devices/sync-desired-state');
      return handler({ Records: [record(item)] } as never);
    });
    const writes = updatesOf(device.id);
    expect(await replay(older!)).toEqual({ written: 0, superseded: 1, deactivated: 0 });
    expect(await replay(newer!)).toEqual({ written: 0, superseded: 1, deactivated: 0 });
    expect(updatesOf(device.id)).toBe(writes);
    expect(service.iot!.broker.shadows.get(device.id)).toMatchObject({ ok: { state: { desired: { sound: true, command: newer!.commandSeq } } } });
  });
});
