import type { SQSEvent } from 'aws-lambda';
import { afterEveryInvocation, runAsFunction } from '#local/invocation-context';
import { startFailureQueue, type FailureQueueStandIn } from '#local/failure-queue';
import { startStreamReader, type StreamReader, type StreamSource } from '#local/stream-reader';
import { startWebhookQueue, type WebhookQueueStandIn } from '#local/webhook-queue';
import { logger } from '#shared/log';
import { DELIVERY_BATCH_SIZE, DELIVERY_MAX_CONCURRENCY, MAX_DELIVERY_ATTEMPTS, QUEUE_VISIBILITY_TIMEOUT_SECONDS } from '#shared/webhooks/deliver';
import { FAN_OUT_FILTER_PATTERNS } from '#shared/webhooks/stream-filter';
import { FAN_OUT_BATCH_SIZE, FAN_OUT_MAX_RECORD_AGE_SECONDS, FAN_OUT_RETRY_ATTEMPTS } from '#shared/webhooks/stream-failures';

// The webhook pipeline of the local service, with the functions that run it in AWS: the table's
// stream, filtered as the event source mapping filters it → fan-out-events (the same handler) → the delivery queue (an SQS stand-in with the
// stack's visibility timeout, redrive policy and maximum concurrency, its timeouts multiplied by `timeScale`) →
// deliver-webhooks (the same handler). Each invocation is attributed to its function, as in AWS. A
// stream batch the fan-out fails on after the mapping's retries goes, as Lambda's on-failure record,
// to the stream-failures queue (a stand-in too), from which `npm run admin -- replay-stream-failures` replays it.

/** How the local invocations name their event sources (and test/support/deployed-form.ts the deployed ones). */
export const STREAM_SOURCE = { api: 'stream', routeKey: 'table' } as const;
export const QUEUE_SOURCE = { api: 'queue', routeKey: 'webhook-deliveries' } as const;

export interface LocalWebhooks {
  queue: WebhookQueueStandIn;
  /** The fan-out's on-failure destination. */
  streamFailures: FailureQueueStandIn;
  /** Starts reading the table's stream; call it once the handlers' environment is set. */
  startReading(): Promise<void>;
  /** Resolves once the stream is read up to now and the queue is empty: every event so far was handled. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** Told of every invocation of the pipeline's two functions and its duration (the webhook benchmark sums them). */
export type InvocationObserver = (fn: 'fan-out-events' | 'deliver-webhooks', ms: number) => void;

export async function startLocalWebhooks(stream: StreamSource, timeScale: number, observe?: InvocationObserver): Promise<LocalWebhooks> {
  let reader: StreamReader | undefined;
  let stopNudging: (() => void) | undefined;
  const timed = async <T>(fn: 'fan-out-events' | 'deliver-webhooks', work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      observe?.(fn, performance.now() - started);
    }
  };
  const queue = await startWebhookQueue({
    timeScale,
    visibilityTimeoutSeconds: QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    maxReceiveCount: MAX_DELIVERY_ATTEMPTS,
    maxConcurrency: DELIVERY_MAX_CONCURRENCY,
    batchSize: DELIVERY_BATCH_SIZE,
    deliver: (event: SQSEvent) => runAsFunction({ fn: 'deliver-webhooks', ...QUEUE_SOURCE }, async () => {
      const { handler } = await import('#functions/webhooks/deliver-webhooks');
      return timed('deliver-webhooks', () => handler(event));
    }),
  });
  const streamFailures = await startFailureQueue();
  return {
    queue,
    streamFailures,
    async startReading() {
      reader = await startStreamReader({
        ...stream,
        filters: FAN_OUT_FILTER_PATTERNS,
        batchSize: FAN_OUT_BATCH_SIZE,
        handle: (records) => runAsFunction({ fn: 'fan-out-events', ...STREAM_SOURCE }, async () => {
          const { handler } = await import('#functions/webhooks/fan-out-events');
          return timed('fan-out-events', () => handler({ Records: records }));
        }),
        onError: (error) => logger.error('webhook fan-out failed; the batch will be retried', { error }),
        failures: {
          retryAttempts: FAN_OUT_RETRY_ATTEMPTS,
          maxRecordAgeSeconds: FAN_OUT_MAX_RECORD_AGE_SECONDS,
          onFailure: (failure) => {
            logger.error('webhook fan-out gave up on a stream batch; its range is in the stream-failures queue', { batch: failure.DDBStreamBatchInfo });
            streamFailures.put(JSON.stringify(failure));
          },
        },
      });
      // An idle reader backs off; a function that ran may have written, so it goes back to Lambda's pace.
      const read = reader;
      stopNudging = afterEveryInvocation(() => read.nudge());
    },
    async settled() {
      await reader?.caughtUp();
      await queue.drained();
    },
    async stop() {
      stopNudging?.();
      await reader?.stop();
      await queue.stop();
      await streamFailures.stop();
    },
  };
}
