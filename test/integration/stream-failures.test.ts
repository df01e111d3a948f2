import { randomUUID } from 'node:crypto';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ScanCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFailureQueue, type FailureQueueStandIn } from '#local/failure-queue';
import { startStreamReader, type StreamReader } from '#local/stream-reader';
import { replayStreamFailures } from '#local/stream-replay';
import { localEndpointConfig } from '#shared/aws/client-config';
import { createBatchReader } from '#shared/data/batch-read';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { fanOut, type StreamRecordLike } from '#shared/webhooks/fan-out';
import type { WebhookMessage } from '#shared/webhooks/queue';
import { FAN_OUT_FILTER_PATTERNS } from '#shared/webhooks/stream-filter';
import type { StreamBatchFailure } from '#shared/webhooks/stream-failures';
import { makeDevice } from '../support/factories';
import { freshTable } from '../support/service';

// No webhook event is lost without a trace: the local stream reader gives up on a batch as Lambda's
// event source mapping does (split down to the failing record, retried, then discarded) and puts
// Lambda's on-failure record, the record's shard and sequence-number range, in the stream-failures
// queue; the replay (npm run admin -- replay-stream-failures) reads that range again from DynamoDB
// Local's stream and fans it out with the real fan-out.

const stamp = () => new Date().toISOString().slice(0, 23);

async function until(condition: () => boolean, what: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('stream batches the fan-out gives up on', () => {
  let doc: DocumentClient;
  let table: string;
  let endpoint: string;
  let reader: StreamReader;
  let failures: FailureQueueStandIn;
  let streams: DynamoDBStreamsClient;
  let sqs: SQSClient;
  const queued: WebhookMessage[] = [];
  const userId = randomUUID();
  const clientId = `app-${randomUUID()}`;
  const healthy = makeDevice({ id: randomUUID() });
  const poisoned = makeDevice({ id: randomUUID() });
  /** While true, the fan-out fails on every batch holding a change of the poisoned device (a bug on one kind of record). */
  let poisonFails = true;

  const deps = () => ({
    grants: createGrantRepo({ doc, table }), webhooks: createWebhookRepo({ doc, table }), batch: createBatchReader({ doc, table }),
    queue: { send: async (messages: readonly WebhookMessage[]) => void queued.push(...messages), retryAfter: async () => undefined },
  });
  const ofDevice = (id: string) => (record: StreamRecordLike) => JSON.stringify(record.dynamodb?.NewImage ?? {}).includes(id);
  const failureRecords = () => failures.bodies().map((body) => JSON.parse(body) as StreamBatchFailure);
  /** The fan-out, with the bug on the poisoned device's records while `poisonFails`. */
  const fanOutUnlessPoisoned = async (records: StreamRecordLike[]) => {
    if (poisonFails && records.some(ofDevice(poisoned.id))) throw new Error('the fan-out fails on this record');
    return fanOut(records, deps());
  };
  const replay = (forgetExpired = false) => replayStreamFailures({ streams, sqs, failuresQueueUrl: failures.queueUrl, forgetExpired, fanOut: fanOutUnlessPoisoned });
  /** Lambda's record of the change given up on, as the first test found it. */
  let givenUp: StreamBatchFailure;
  const deliveries = async () => {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return Items.filter((item) => String(item.pk).startsWith('DELIVERIES#'));
  };

  beforeAll(async () => {
    ({ doc, table, endpoint } = await freshTable());
    failures = await startFailureQueue();
    streams = new DynamoDBStreamsClient(localEndpointConfig(endpoint));
    sqs = new SQSClient(localEndpointConfig(failures.url));
    const devices = createDeviceRepo({ doc, table });
    await devices.createDevice(userId, healthy);
    await devices.createDevice(userId, poisoned);
    await createGrantRepo({ doc, table }).saveConsent({ userId, clientId, scopes: ['read_device'], grantedAt: stamp() });
    await createWebhookRepo({ doc, table }).setUrl(clientId, 'https://hooks.example/receiver');
    reader = await startStreamReader({
      endpoint, tableName: table, filters: FAN_OUT_FILTER_PATTERNS, pollMs: 10,
      handle: (records) => fanOutUnlessPoisoned(records),
      failures: { retryAttempts: 2, maxRecordAgeSeconds: 3600, onFailure: (failure) => failures.put(JSON.stringify(failure)) },
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await failures?.stop();
    streams?.destroy();
    sqs?.destroy();
  });

  it('a change the fan-out fails on every retry lands in the stream-failures queue as Lambda’s on-failure record of that change alone; the rest goes on', async () => {
    const devices = createDeviceRepo({ doc, table });
    await devices.setConnection(userId, healthy.id, true, stamp());
    await devices.setConnection(userId, poisoned.id, true, stamp());
    await devices.setConnection(userId, healthy.id, false, stamp());

    await until(() => failures.bodies().length === 1 && queued.length === 2, 'the failure record and the two healthy deliveries');
    await reader.caughtUp();

    const [failure] = failureRecords();
    givenUp = failure!;
    expect(failure!.requestContext.condition).toBe('RetryAttemptsExhausted');
    expect(failure!.requestContext.approximateInvokeCount).toBe(3);
    expect(failure!.DDBStreamBatchInfo).toMatchObject({ batchSize: 1, startSequenceNumber: failure!.DDBStreamBatchInfo.endSequenceNumber });
    expect(failure!.DDBStreamBatchInfo.streamArn).toContain(table);
    // Only the healthy device's two changes were delivered; the reader went past the poisoned one.
    expect(queued.map((m) => m.clientId)).toEqual([clientId, clientId]);
    expect((await deliveries()).map((d) => JSON.parse(String(d.payload)).data.device_id)).toEqual([healthy.id, healthy.id]);
    await devices.setConnection(userId, healthy.id, true, stamp());
    await until(() => queued.length === 3, 'a later change delivered');
  });

  it('refuses a message that is not an on-failure record of a DynamoDB stream: reported, kept in the queue, nothing written', async () => {
    const before = (await deliveries()).length;
    failures.put('not json');
    failures.put(JSON.stringify({ DDBStreamBatchInfo: { shardId: 'shardId-1', streamArn: 'arn:aws:dynamodb:local:0:table/t/stream/x', startSequenceNumber: '9', endSequenceNumber: '3' } }));
    const sent = queued.length;
    poisonFails = true;

    const report = await replay();

    expect(report.refused.map((r) => r.problem)).toEqual(['the message is not JSON', 'DDBStreamBatchInfo ends before it starts']);
    // The poisoned change still fails: reported, kept for the next replay.
    expect(report.failed.map((f) => f.error)).toEqual(['Error: the fan-out fails on this record']);
    expect(report.replayed).toEqual([]);
    expect(failures.bodies()).toHaveLength(3);
    expect((await deliveries()).length).toBe(before);
    expect(queued.length).toBe(sent);
  });

  it('replays the failed change from the stream once its cause is gone: its delivery written and queued, its message deleted', async () => {
    poisonFails = false;
    const kept = failures.bodies();
    // The messages the previous replay received come back once their receipt runs out; here, at once.
    failures.endReceipts();

    const report = await replay();

    expect(report.replayed).toEqual([expect.objectContaining({ records: 1, queued: 1 })]);
    expect(queued.at(-1)).toMatchObject({ clientId, userId });
    const payloads = (await deliveries()).map((d) => JSON.parse(String(d.payload)) as { type: string; timestamp: string; data: { device_id: string } });
    const replayed = payloads.filter((p) => p.data.device_id === poisoned.id);
    expect(replayed.map((p) => p.type)).toEqual(['device.connection_changed']);
    // The event carries the stream record's time: the SDK's Date, handed over in epoch seconds as
    // Lambda does (DynamoDB Local rounds it down, to the minute).
    expect(Math.abs(Date.parse(replayed[0]!.timestamp) - Date.now())).toBeLessThan(600_000);
    // The two malformed messages stay; the replayed one is gone, and a second replay writes nothing twice.
    expect(failures.bodies()).toEqual(kept.filter((body) => !body.includes('RetryAttemptsExhausted')));
    expect((await replay()).replayed).toEqual([]);
  });

  it('reports a range the stream no longer has as expired, with its times; keeps its message, or deletes it when told to forget', async () => {
    const gone = { ...givenUp, DDBStreamBatchInfo: { ...givenUp.DDBStreamBatchInfo, shardId: 'shardId-00000000000000000000-00000000' } };
    const before = failures.bodies().length;
    failures.endReceipts();
    failures.put(JSON.stringify(gone));

    const kept = await replay();
    expect(kept.expired).toEqual([expect.objectContaining({
      shardId: gone.DDBStreamBatchInfo.shardId, forgotten: false, approximateArrivalOfFirstRecord: gone.DDBStreamBatchInfo.approximateArrivalOfFirstRecord,
      reason: expect.stringContaining('the stream no longer has these records'),
    })]);
    expect(failures.bodies()).toHaveLength(before + 1);
    failures.endReceipts();

    const forgotten = await replay(true);
    expect(forgotten.expired).toEqual([expect.objectContaining({ forgotten: true })]);
    expect(failures.bodies()).toHaveLength(before);
  });
});
