import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { localClient } from '#local/dynamodb-local';
import { SDK_LOGGER_MIDDLEWARE } from '#shared/aws/client-config';
import { matchesFilters, type FilterPattern } from '#shared/webhooks/stream-filter';
import type { StreamBatchFailure } from '#shared/webhooks/stream-failures';

// Lambda's DynamoDB Streams event source, locally: reads the table's stream on DynamoDB Local with
// the Streams API and hands each batch of records to the fan-out handler, in order per shard. A
// batch whose handler throws is handed over again (as Lambda retries a stream batch), after a pause.
// With `failures` (the mapping's retry attempts, maximum record age and on-failure destination), it
// gives up as Lambda does: a failing batch is split in two (bisectBatchOnError; splitting uses no
// retry) down to single records, each retried `retryAttempts` times; a record that still fails, or
// that is older than `maxRecordAgeSeconds`, is discarded, its on-failure record (Lambda's format:
// shard and sequence-number range) handed to `onFailure`, and the reader goes on past it.
// With `filters` (the event source mapping's), records that match none are dropped before the
// handler, and a batch left empty is not handed over at all, as Lambda's event filtering does.
// Like Lambda's stream poller, it reads each shard about four times a second while records come
// (`pollMs`, 250 ms between reads), and again at once only after a full batch (`batchSize`
// records): a steady trickle of writes costs four GetRecords a second, not one per write. Idle, it
// backs off (the pause doubles up to `idlePollMs`) until `nudge()` says a write may have come (the
// local service nudges after every invocation of a function) and it is back at its 250 ms pace. So
// the service's own writes reach the handler as soon as at Lambda's pace, another process's within
// `idlePollMs`; what is handed over, in which batches and order, is the same. `caughtUp()` reads at
// once, so a test waits for one fresh read, not for the pace.
// The records are read as JSON and handed over as they came, which is the form Lambda hands them to
// a function in (attribute values as on the wire, times in epoch seconds), and the filters look at
// them before anything else is done with them. Read through the SDK, each record was first turned
// into its objects (a walk through the Streams API's schema), for both readers, for every write of
// the table: most of the local service's CPU for its streams, a tenth of a token refresh's.

export interface StreamReader {
  /** Resolves once every record written so far has been handed over and handled. */
  caughtUp(): Promise<void>;
  /** A write may have come: an idle reader goes back to its pace (its next read at most `pollMs` after its last). */
  nudge(): void;
  stop(): Promise<void>;
}

/** The table whose stream a local event source mapping reads, and how long an idle reader may wait between reads. */
export interface StreamSource {
  endpoint: string;
  tableName: string;
  /** The longest pause of an idle reader, ms: after each empty read the pause doubles from `pollMs` up to it (default 2000). */
  idlePollMs?: number;
}

export interface StreamReaderOptions extends StreamSource {
  /** Lambda's stream records (its `DynamoDBStreamEvent.Records`, less `eventSourceARN`). */
  handle(records: DynamoDBRecord[]): Promise<unknown>;
  /** The function the mapping invokes, as its on-failure records name it. Default: fan-out-events. */
  functionName?: string;
  /** The event source mapping's filter patterns; none: every record. */
  filters?: readonly FilterPattern[];
  /** Between reads of the stream while records come, unless the last brought a full batch, ms (default 250: Lambda's four polls a second per shard). */
  pollMs?: number;
  /** Records per GetRecords, at most (the event source mapping's batch size; default 100, Lambda's default for DynamoDB streams). */
  batchSize?: number;
  onError?(error: unknown): void;
  /** Lambda's handling of a batch that keeps failing; none: it is handed over until it succeeds. */
  failures?: {
    retryAttempts: number;
    maxRecordAgeSeconds: number;
    /** The on-failure destination: gets Lambda's record of each batch given up on. */
    onFailure(failure: StreamBatchFailure): void;
  };
}

/**
 * Pause before the next retry of a failing batch: doubling from 100 ms, at most 4 s, so that the
 * local service's 10 retries span some 20 s: a DynamoDB Local slowed down by a busy machine for a
 * few seconds does not make it give up on a batch (Lambda backs off too; it documents no schedule).
 */
const retryPauseMs = (retries: number) => Math.min(100 * 2 ** retries, 4000);

export async function startStreamReader(options: StreamReaderOptions): Promise<StreamReader> {
  const ddb = localClient(options.endpoint);
  const { Table } = await ddb.send(new DescribeTableCommand({ TableName: options.tableName }));
  ddb.destroy();
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`Table ${options.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  streams.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE); // It walks every batch of records for no logger (observeClient).
  const getRecords = recordsReader(options.endpoint);
  const pollMs = options.pollMs ?? 250;
  const idlePollMs = Math.max(options.idlePollMs ?? 2000, pollMs);
  const batchSize = options.batchSize ?? 100;
  /** Shard id → its next iterator (undefined: closed and read to its end). */
  const iterators = new Map<string, string | undefined>();
  let stopped = false;
  let started = false;
  /** Reads begun so far, and the number of the last one that found every shard empty (caughtUp waits on them). */
  let reads = 0;
  let lastEmptyRead = 0;
  /** Ends the current pause by `at` (performance.now() ms; 0: now) if it would end later: caughtUp, nudge, stop. */
  let endPauseBy: ((at: number) => void) | undefined;
  /** The next idle pause: doubles after each empty read, back to `pollMs` once records come or a nudge. */
  let idleWait = pollMs;
  /** Waiters for the end of the current read round. */
  let roundEnded: (() => void)[] = [];
  const pause = (ms: number) => new Promise<void>((resolve) => {
    let endsAt = performance.now() + ms;
    const end = () => {
      endPauseBy = undefined;
      resolve();
    };
    let timer = setTimeout(end, ms);
    endPauseBy = (at) => {
      if (at >= endsAt) return;
      endsAt = at;
      clearTimeout(timer);
      timer = setTimeout(end, Math.max(0, at - performance.now()));
    };
  });
  const endRound = () => {
    const waiting = roundEnded;
    roundEnded = [];
    for (const resolve of waiting) resolve();
  };

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

  /** Reads each shard once; whether any record came, and whether a batch was full (more may be waiting). */
  async function readOnce(): Promise<{ any: boolean; full: boolean }> {
    let any = false;
    let full = false;
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue;
      let answer;
      try {
        answer = await getRecords.read(iterator, batchSize);
      } catch (error) {
        if (error instanceof StreamsError && (error.name === 'ExpiredIteratorException' || error.name === 'TrimmedDataAccessException')) {
          iterators.delete(shardId);
          rediscover = true;
          continue;
        }
        throw error;
      }
      const read = answer.Records ?? [];
      if (read.length > 0) any = true;
      if (read.length >= batchSize) full = true;
      const records = read.filter((record) => matchesFilters(options.filters ?? [], record));
      // Not advanced until handled (or given up on, with `failures`): a failing batch is read again.
      if (records.length > 0) await (options.failures ? withRetries(shardId, records, options.failures) : options.handle(records));
      iterators.set(shardId, answer.NextShardIterator);
      // A shard read to its end has children: find them now rather than at the next periodic look.
      if (!answer.NextShardIterator) rediscover = true;
    }
    return { any, full };
  }

  /** Hands `records` over until they are handled, split or given up on, as Lambda's event source mapping does. */
  async function withRetries(shardId: string, records: DynamoDBRecord[], failures: NonNullable<StreamReaderOptions['failures']>): Promise<void> {
    for (let retries = 0; ; retries++) {
      const oldest = records[0]!.dynamodb?.ApproximateCreationDateTime;
      if (oldest && Date.now() - oldest * 1000 > failures.maxRecordAgeSeconds * 1000) {
        return failures.onFailure(failureRecord(shardId, records, 'RecordAgeExceeded', retries));
      }
      try {
        await options.handle(records);
        return;
      } catch (error) {
        options.onError?.(error);
        if (stopped) throw error;
        if (records.length > 1) {
          const half = Math.ceil(records.length / 2);
          await withRetries(shardId, records.slice(0, half), failures);
          return withRetries(shardId, records.slice(half), failures);
        }
        if (retries >= failures.retryAttempts) return failures.onFailure(failureRecord(shardId, records, 'RetryAttemptsExhausted', retries + 1));
        await new Promise((r) => setTimeout(r, retryPauseMs(retries)));
      }
    }
  }

  function failureRecord(shardId: string, records: DynamoDBRecord[], condition: string, invocations: number): StreamBatchFailure {
    const arrival = (record: DynamoDBRecord) => new Date((record.dynamodb?.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000).toISOString();
    return {
      requestContext: { requestId: randomUUID(), functionArn: `arn:aws:lambda:local:000000000000:function:${options.functionName ?? 'fan-out-events'}`, condition, approximateInvokeCount: invocations },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId, streamArn: streamArn!, batchSize: records.length,
        startSequenceNumber: records[0]!.dynamodb!.SequenceNumber!, endSequenceNumber: records.at(-1)!.dynamodb!.SequenceNumber!,
        approximateArrivalOfFirstRecord: arrival(records[0]!), approximateArrivalOfLastRecord: arrival(records.at(-1)!),
      },
    };
  }

  await discover();
  let rounds = 1;
  let rediscover = false;
  /** When the last read began (performance.now() ms): a nudge puts the next at most `pollMs` after it. */
  let lastReadAt = performance.now();
  const loop = (async () => {
    while (!stopped) {
      try {
        // New shards: every 40 reads (10 s at the default pace), and at once when one has closed.
        if (rounds++ % 40 === 0 || rediscover) {
          rediscover = false;
          await discover();
        }
        const read = ++reads;
        const readAt = performance.now();
        const { any, full } = await readOnce();
        if (!any) lastEmptyRead = read;
        endRound();
        lastReadAt = readAt;
        const wait = any ? pollMs : idleWait;
        idleWait = any ? pollMs : Math.min(idleWait * 2, idlePollMs);
        if (!full) await pause(wait);
      } catch (error) {
        endRound();
        if (stopped) break;
        options.onError?.(error);
        await pause(Math.max(pollMs, 100));
      }
    }
    endRound();
  })();

  return {
    nudge() {
      idleWait = pollMs;
      endPauseBy?.(lastReadAt + pollMs);
    },
    async caughtUp() {
      // A read begun after this call that finds nothing new: everything written before it was handled.
      const after = reads;
      while (lastEmptyRead <= after && !stopped) {
        const ended = new Promise<void>((resolve) => roundEnded.push(resolve));
        endPauseBy?.(0);
        await ended;
      }
    },
    async stop() {
      stopped = true;
      endPauseBy?.(0);
      await loop;
      streams.destroy();
      getRecords.destroy();
    },
  };
}

/** An error answer of the Streams API: `name` is its type (`ExpiredIteratorException`, …). */
export class StreamsError extends Error {}

/**
 * GetRecords on DynamoDB Local, its answer parsed as JSON and nothing more, over connections kept
 * open. DynamoDB Local checks no signature, so the request carries a fixed one in the form it reads.
 */
export function recordsReader(endpoint: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const { hostname, port } = new URL(endpoint);
  const headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDBStreams_20120810.GetRecords',
    authorization: 'AWS4-HMAC-SHA256 Credential=local/20000101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
  };
  const read = (iterator: string, limit: number) => new Promise<{ Records?: DynamoDBRecord[]; NextShardIterator?: string }>((resolve, reject) => {
    const body = JSON.stringify({ ShardIterator: iterator, Limit: limit });
    const req = request({ hostname, port, method: 'POST', path: '/', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        try {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          if (res.statusCode === 200) return resolve(answer);
          const error = new StreamsError(String(answer.message ?? answer.Message ?? `status ${res.statusCode}`));
          error.name = String(answer.__type ?? 'StreamsError').replace(/^.*#/, '');
          reject(error);
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
  return { read, destroy: () => agent.destroy() };
}
