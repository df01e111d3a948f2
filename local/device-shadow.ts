import { afterEveryInvocation, runAsFunction } from '#local/invocation-context';
import { startFailureQueue, type FailureQueueStandIn } from '#local/failure-queue';
import { startStreamReader, type StreamReader, type StreamSource } from '#local/stream-reader';
import { logger } from '#shared/log';
import { DESIRED_STATE_FILTER_PATTERNS, DESIRED_STATE_MAX_RECORD_AGE_SECONDS, DESIRED_STATE_RETRY_ATTEMPTS } from '#shared/shadow/desired-filter';

// The desired state's pipeline of the local service, as in AWS: the table's stream, filtered as its
// event source mapping filters it → sync-desired-state (the same handler), which writes the owners'
// commands to the shadows through the data-plane stand-in (local/iot-data-plane.ts). A batch it fails
// on after the mapping's retries goes, as Lambda's on-failure record, to a failures queue stand-in.

/** How the local invocations name the desired state's mapping (and test/support/deployed-form.ts the deployed one). */
export const DESIRED_STATE_SOURCE = { api: 'stream', routeKey: 'desired-state' } as const;

export interface LocalDesiredState {
  /** The mapping's on-failure destination. */
  failures: FailureQueueStandIn;
  /** Resolves once the stream is read up to now: every command so far was handed to the function. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts reading the table's stream for commands; call it once the handlers' environment names the data-plane stand-in. */
export async function startLocalDesiredState(stream: StreamSource): Promise<LocalDesiredState> {
  const failures = await startFailureQueue();
  let reader: StreamReader;
  try {
    reader = await startStreamReader({
      ...stream,
      functionName: 'sync-desired-state',
      filters: DESIRED_STATE_FILTER_PATTERNS,
      handle: (records) => runAsFunction({ fn: 'sync-desired-state', ...DESIRED_STATE_SOURCE }, async () => {
        const { handler } = await import('#functions/devices/sync-desired-state');
        return handler({ Records: records });
      }),
      onError: (error) => logger.error('desired state failed; the batch will be retried', { error }),
      failures: {
        retryAttempts: DESIRED_STATE_RETRY_ATTEMPTS,
        maxRecordAgeSeconds: DESIRED_STATE_MAX_RECORD_AGE_SECONDS,
        onFailure: (failure) => {
          logger.error('desired state gave up on a stream batch; its range is in the desired-state failures queue', { batch: failure.DDBStreamBatchInfo });
          failures.put(JSON.stringify(failure));
        },
      },
    });
  } catch (error) {
    await failures.stop();
    throw error;
  }
  // An idle reader backs off; a function that ran may have written a command, so it goes back to Lambda's pace.
  const stopNudging = afterEveryInvocation(() => reader.nudge());
  return {
    failures,
    settled: () => reader.caughtUp(),
    async stop() {
      stopNudging();
      await reader.stop();
      await failures.stop();
    },
  };
}
