import type { DynamoDBRecord } from 'aws-lambda';
import { PutCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordsReader, startStreamReader, StreamsError, type StreamReader } from '#local/stream-reader';
import { freshTable } from '../support/service';

// The local stream reader reads at Lambda's pace while records come and backs off while the stream
// is idle, as Lambda's poller costs nothing to an idle function: an idle `npm start` must not keep a
// core busy asking DynamoDB Local for nothing. A nudge (the local service gives one after every
// invocation of a function: it may have written) brings it back to its pace; caughtUp reads at once.
// The reader here backs off towards a minute, so a record it hands over came from a nudge or a
// caughtUp, never from its own timer.

describe('the local stream reader\'s pace', () => {
  let doc: DocumentClient;
  let table: string;
  let reader: StreamReader;
  const handed: DynamoDBRecord[] = [];
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const put = (id: string) => doc.send(new PutCommand({ TableName: table, Item: { pk: `PACE#${id}`, sk: 'A' } }));
  const keysHanded = () => handed.map((r) => r.dynamodb?.Keys?.pk?.S);

  beforeAll(async () => {
    let endpoint: string;
    ({ doc, table, endpoint } = await freshTable());
    reader = await startStreamReader({
      endpoint, tableName: table, pollMs: 50, idlePollMs: 60_000, handle: async (records) => void handed.push(...records),
    });
  });

  afterAll(async () => {
    await reader?.stop();
    doc?.destroy();
  });

  it('idle, it backs off: a record written then is not read at its busy pace', async () => {
    // Empty reads at 0, 50, 150, 350, 750, 1550, 3150 ms, then the next one 6.4 s after that.
    await wait(3500);
    await put('idle');
    await wait(1000);

    expect(keysHanded()).toEqual([]);
  }, 20_000);

  it('a nudge brings it back to its pace: the record comes without a caughtUp', async () => {
    reader.nudge();
    for (let i = 0; i < 200 && keysHanded().length === 0; i++) await wait(25);

    expect(keysHanded()).toEqual(['PACE#idle']);
  });

  it('caughtUp reads at once, however far it has backed off', async () => {
    await wait(3500);
    await put('caught-up');
    await reader.caughtUp();

    expect(keysHanded()).toEqual(['PACE#idle', 'PACE#caught-up']);
  }, 20_000);

  it('reads an error answer of the Streams API as an error named by its type (how an expired iterator is told)', async () => {
    const { endpoint } = await freshTable();
    const reader = recordsReader(endpoint);
    try {
      const error = await reader.read('not-an-iterator', 10).then(() => undefined, (e: unknown) => e);

      expect(error).toBeInstanceOf(StreamsError);
      expect((error as Error).name).toBe('ValidationException');
      expect((error as Error).message).not.toBe('');
    } finally {
      reader.destroy();
    }
  });

  it('hands the records over in the form Lambda does: attribute values as on the wire, times in epoch seconds', () => {
    const record = handed.at(-1)!;

    expect(record).toMatchObject({ eventName: 'INSERT', eventSource: 'aws:dynamodb', dynamodb: { Keys: { pk: { S: 'PACE#caught-up' }, sk: { S: 'A' } }, NewImage: { pk: { S: 'PACE#caught-up' } }, StreamViewType: 'NEW_AND_OLD_IMAGES' } });
    const seconds = record.dynamodb!.ApproximateCreationDateTime!;
    expect(typeof seconds).toBe('number');
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(600);
  });
});
