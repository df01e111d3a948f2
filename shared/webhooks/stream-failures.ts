// The table stream's batches the fan-out gave up on. Lambda's event source mapping retries a failing
// batch (split in two on each error), and discards it after FAN_OUT_RETRY_ATTEMPTS retries or once
// its records are FAN_OUT_MAX_RECORD_AGE_SECONDS old; its on-failure destination (an SQS queue) then
// gets a description of the batch: the shard and the range of sequence numbers, not the records
// ("Retain discarded records for a DynamoDB event source in Lambda", Lambda Developer Guide). The
// stream keeps records for 24 hours, so the records are read again from there to be replayed
// (local/stream-replay.ts, the operator's command).

/** The event source mapping's BatchSize: records per invocation at most (the local stream reader reads as many per GetRecords). */
export const FAN_OUT_BATCH_SIZE = 100;

/** The event source mapping's MaximumRetryAttempts. */
export const FAN_OUT_RETRY_ATTEMPTS = 10;

/** The event source mapping's MaximumRecordAgeInSeconds: half the stream's 24 hours, so a discarded batch can be read again for 12 hours at least. */
export const FAN_OUT_MAX_RECORD_AGE_SECONDS = 12 * 3600;

/** How long DynamoDB Streams keeps a record (a fixed 24 hours). */
export const STREAM_RETENTION_SECONDS = 24 * 3600;

/** The batch part of Lambda's on-failure record of a DynamoDB stream event source. */
export interface StreamBatchInfo {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  /** ISO times. */
  approximateArrivalOfFirstRecord: string;
  approximateArrivalOfLastRecord: string;
  batchSize: number;
  streamArn: string;
}

/** Lambda's on-failure record of a DynamoDB stream batch (the message body its destination gets). */
export interface StreamBatchFailure {
  requestContext: {
    requestId: string;
    functionArn: string;
    /** Why the batch was discarded: 'RetryAttemptsExhausted' or 'RecordAgeExceeded'. */
    condition: string;
    approximateInvokeCount: number;
  };
  responseContext: { statusCode: number; executedVersion: string; functionError: string };
  version: '1.0';
  /** ISO time of the failure. */
  timestamp: string;
  DDBStreamBatchInfo: StreamBatchInfo;
}

const SEQUENCE_NUMBER = /^\d{1,40}$/;

/**
 * The batch a failure message describes, or the reason it is not one (not JSON, no
 * `DDBStreamBatchInfo`, a field missing or malformed, a range that ends before it starts): the
 * replay refuses such a message, writing nothing.
 */
export function parseStreamBatchFailure(body: string): { batch: StreamBatchInfo; condition?: string } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { problem: 'the message is not JSON' };
  }
  const info = isObject(parsed) ? parsed.DDBStreamBatchInfo : undefined;
  if (!isObject(info)) return { problem: 'the message has no DDBStreamBatchInfo: not an on-failure record of a DynamoDB stream' };
  for (const field of ['shardId', 'streamArn', 'startSequenceNumber', 'endSequenceNumber'] as const) {
    if (typeof info[field] !== 'string' || info[field] === '') return { problem: `DDBStreamBatchInfo.${field} is missing` };
  }
  const { startSequenceNumber: start, endSequenceNumber: end } = info as unknown as StreamBatchInfo;
  if (!SEQUENCE_NUMBER.test(start) || !SEQUENCE_NUMBER.test(end)) return { problem: 'a sequence number of DDBStreamBatchInfo is not a number' };
  if (BigInt(end) < BigInt(start)) return { problem: 'DDBStreamBatchInfo ends before it starts' };
  const condition = isObject(parsed) && isObject(parsed.requestContext) && typeof parsed.requestContext.condition === 'string'
    ? parsed.requestContext.condition : undefined;
  return { batch: info as unknown as StreamBatchInfo, ...(condition ? { condition } : {}) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
