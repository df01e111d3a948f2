import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand, DynamoDBStreamsClient, ExpiredIteratorException, GetRecordsCommand, GetShardIteratorCommand, TrimmedDataAccessException,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { localClient } from '#local/dynamodb-local';
import { matchesFilters, type FilterPattern } from '#shared/webhooks/stream-filter';

// Lambda's DynamoDB Streams event source, locally: reads the table's stream on DynamoDB Local with
// the Streams API and hands each batch of records to the fan-out handler, in order per shard. A
// batch whose handler throws is handed over again (as Lambda retries a stream batch), after a pause.
// With `filters` (the event source mapping's), records that match none are dropped before the
// handler, and a batch left empty is not handed over at all, as Lambda's event filtering does.

export interface StreamReader {
  /** Resolves once every record written so far has been handed over and handled. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

export interface StreamReaderOptions {
  endpoint: string;
  tableName: string;
  handle(records: _Record[]): Promise<unknown>;
  /** The event source mapping's filter patterns; none: every record. */
  filters?: readonly FilterPattern[];
  /** Between polls of an idle shard, ms. */
  pollMs?: number;
  onError?(error: unknown): void;
}

export async function startStreamReader(options: StreamReaderOptions): Promise<StreamReader> {
  const ddb = localClient(options.endpoint);
  const { Table } = await ddb.send(new DescribeTableCommand({ TableName: options.tableName }));
  ddb.destroy();
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const pollMs = options.pollMs ?? 25;
  /** Shard id → its next iterator (undefined: closed and read to its end). */
  const iterators = new Map<string, string | undefined>();
  let stopped = false;
  let idle = false;
  let started = false;

  async function discover() {
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      for (const shard of StreamDescription?.Shards ?? []) {
        if (iterators.has(shard.ShardId!)) continue;
        // Records written before the service started were never meant for webhooks: start at LATEST on open shards then.
        const type = !started && !shard.SequenceNumberRange?.EndingSequenceNumber ? 'LATEST' : 'TRIM_HORIZON';
        const { ShardIterator } = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: type }));
        iterators.set(shard.ShardId!, ShardIterator);
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    started = true;
  }

  async function readOnce(): Promise<boolean> {
    let any = false;
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue;
      let answer;
      try {
        answer = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
      } catch (error) {
        if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
          iterators.delete(shardId);
          continue;
        }
        throw error;
      }
      const read = answer.Records ?? [];
      if (read.length > 0) any = true;
      const records = read.filter((record) => matchesFilters(options.filters ?? [], record));
      // Not advanced until handled: a failing batch is read again.
      if (records.length > 0) await options.handle(records);
      iterators.set(shardId, answer.NextShardIterator);
    }
    return any;
  }

  await discover();
  let rounds = 1;
  const loop = (async () => {
    while (!stopped) {
      try {
        if (rounds++ % 40 === 0) await discover();
        const any = await readOnce();
        idle = !any;
        if (!any) await new Promise((r) => setTimeout(r, pollMs));
      } catch (error) {
        idle = false;
        if (stopped) break;
        options.onError?.(error);
        await new Promise((r) => setTimeout(r, pollMs * 4));
      }
    }
  })();

  return {
    async caughtUp() {
      idle = false;
      while (!idle && !stopped) await new Promise((r) => setTimeout(r, pollMs));
    },
    async stop() {
      stopped = true;
      await loop;
      streams.destroy();
    },
  };
}
