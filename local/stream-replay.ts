import { GetRecordsCommand, GetShardIteratorCommand, type DynamoDBStreamsClient, type _Record } from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { StreamRecordLike } from '#shared/webhooks/fan-out';
import { FAN_OUT_FILTER_PATTERNS, matchesFilters } from '#shared/webhooks/stream-filter';
import { parseStreamBatchFailure, type StreamBatchInfo } from '#shared/webhooks/stream-failures';

// `npm run admin -- replay-stream-failures`: the stream batches the fan-out gave up on, read again
// from the table's stream by the range Lambda's on-failure record names, filtered as the event
// source mapping filters them, and handed to the same fan-out. Webhook ids derive from the stream
// records, so a record replayed twice (or whose first attempt got half-way) is not delivered under
// two ids: its delivery item exists already and is queued again only.

export interface ReplayDeps {
  streams: Pick<DynamoDBStreamsClient, 'send'>;
  sqs: Pick<SQSClient, 'send'>;
  /** The fan-out's on-failure destination (the stack's StreamFailuresQueueUrl output). */
  failuresQueueUrl: string;
  /** shared/webhooks/fan-out.ts with its repositories and delivery queue; the number of deliveries queued. */
  fanOut(records: StreamRecordLike[]): Promise<number>;
  /** Delete the messages whose records the stream no longer has, once reported (default: they stay in the queue). */
  forgetExpired?: boolean;
}

type Range = Pick<StreamBatchInfo, 'shardId' | 'startSequenceNumber' | 'endSequenceNumber'>;

/** What a replay did with each message of the failures queue. */
export interface ReplayReport {
  /** Read again and fanned out; the message deleted. */
  replayed: (Range & { records: number; queued: number })[];
  /** The stream no longer has the records (older than 24 hours, or the stream was replaced): their events are lost. */
  expired: (Range & Pick<StreamBatchInfo, 'approximateArrivalOfFirstRecord' | 'approximateArrivalOfLastRecord'> & { reason: string; forgotten: boolean })[];
  /** Not an on-failure record of a DynamoDB stream: left in the queue, nothing written. */
  refused: { messageId: string; problem: string }[];
  /** The fan-out failed again: left in the queue for the next replay. */
  failed: (Range & { error: string })[];
}

/** While the replay handles a message, no other reader of the queue gets it (seconds). */
const RECEIPT_SECONDS = 300;
/** An open shard answers empty reads until a record arrives: this many in a row and the range is taken as read. */
const MAX_EMPTY_READS = 5;
const EXPIRED = new Set(['TrimmedDataAccessException', 'ExpiredIteratorException', 'ResourceNotFoundException']);

/**
 * Replays every message of the failures queue once: each range is read from the stream (one
 * GetShardIterator, then GetRecords until its last sequence number) and fanned out, and its message
 * deleted. A message that is not an on-failure record, a range the stream no longer has, and a
 * fan-out that fails again are reported and their messages kept (a range no longer in the stream is
 * deleted with `forgetExpired`). A message is received once per run: what stays comes back to the
 * next run.
 */
export async function replayStreamFailures(deps: ReplayDeps): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: [], expired: [], refused: [], failed: [] };
  const remove = (receiptHandle: string) => deps.sqs.send(new DeleteMessageCommand({ QueueUrl: deps.failuresQueueUrl, ReceiptHandle: receiptHandle }));
  for (;;) {
    const { Messages = [] } = await deps.sqs.send(new ReceiveMessageCommand({
      QueueUrl: deps.failuresQueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: RECEIPT_SECONDS, WaitTimeSeconds: 0,
    }));
    if (Messages.length === 0) return report;
    for (const message of Messages) {
      const parsed = parseStreamBatchFailure(message.Body ?? '');
      if ('problem' in parsed) {
        report.refused.push({ messageId: message.MessageId ?? '', problem: parsed.problem });
        continue;
      }
      const { batch } = parsed;
      const range: Range = { shardId: batch.shardId, startSequenceNumber: batch.startSequenceNumber, endSequenceNumber: batch.endSequenceNumber };
      let records: StreamRecordLike[];
      try {
        records = await readRange(deps.streams, batch);
      } catch (error) {
        if (!(error instanceof Error) || !EXPIRED.has(error.name)) throw error;
        const forgotten = deps.forgetExpired === true;
        report.expired.push({
          ...range, approximateArrivalOfFirstRecord: batch.approximateArrivalOfFirstRecord, approximateArrivalOfLastRecord: batch.approximateArrivalOfLastRecord,
          reason: `${error.name}: the stream no longer has these records`, forgotten,
        });
        if (forgotten) await remove(message.ReceiptHandle!);
        continue;
      }
      const handed = records.filter((record) => matchesFilters(FAN_OUT_FILTER_PATTERNS, record));
      let queued: number;
      try {
        queued = handed.length > 0 ? await deps.fanOut(handed) : 0;
      } catch (error) {
        report.failed.push({ ...range, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
        continue;
      }
      await remove(message.ReceiptHandle!);
      report.replayed.push({ ...range, records: handed.length, queued });
    }
  }
}

/**
 * The records of one shard from the range's first sequence number to its last, both included, in
 * the form Lambda hands them over (and the live reader, local/stream-reader.ts): the SDK's Date of
 * each record becomes epoch seconds.
 */
async function readRange(streams: ReplayDeps['streams'], batch: StreamBatchInfo): Promise<StreamRecordLike[]> {
  const { ShardIterator } = await streams.send(new GetShardIteratorCommand({
    StreamArn: batch.streamArn, ShardId: batch.shardId, ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: batch.startSequenceNumber,
  }));
  const end = BigInt(batch.endSequenceNumber);
  const records: StreamRecordLike[] = [];
  let iterator = ShardIterator;
  for (let empty = 0; iterator && empty < MAX_EMPTY_READS;) {
    const answer = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    const read = answer.Records ?? [];
    for (const record of read) {
      if (BigInt(record.dynamodb?.SequenceNumber ?? '0') > end) return records;
      records.push(asLambdaRecord(record));
      if (BigInt(record.dynamodb?.SequenceNumber ?? '0') === end) return records;
    }
    empty = read.length === 0 ? empty + 1 : 0;
    iterator = answer.NextShardIterator;
  }
  return records;
}

function asLambdaRecord(record: _Record): StreamRecordLike {
  const time = record.dynamodb?.ApproximateCreationDateTime;
  return { ...record, dynamodb: record.dynamodb && { ...record.dynamodb, ApproximateCreationDateTime: time === undefined ? undefined : time.getTime() / 1000 } };
}
