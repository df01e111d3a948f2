import { createServer } from 'node:http';
import { startWebhookQueue } from '#local/webhook-queue';
import { WEBHOOK_ENV } from '#shared/config';
import { MAX_DELIVERY_ATTEMPTS, QUEUE_VISIBILITY_TIMEOUT_SECONDS } from '#shared/webhooks/deliver';

// The two ends of the webhook pipeline that the benchmark's webhook functions talk to, on loopback
// in the bench process: the delivery queue (the local service's SQS stand-in, local/webhook-queue.ts,
// to which fan-out-events and its floor send; what arrives is taken off the queue and dropped, since
// deliver-webhooks is measured with events of its own) and a receiver answering 204, to which
// deliver-webhooks and its floor POST. The receiver counts the requests per path, so that the
// benchmark can check the measured deliveries were made.

export interface WebhookEnds {
  /** The environment the pipeline's functions (and their floors) get: the stand-in's queue, local http receivers allowed. */
  env: Record<string, string>;
  /** `http://127.0.0.1:<port>`: the receiver; a subscription's URL is this with a path. */
  receiverOrigin: string;
  /** Requests the receiver has answered on `path`. */
  received(path: string): number;
  stop(): Promise<void>;
}

export async function startWebhookEnds(): Promise<WebhookEnds> {
  const counts = new Map<string, number>();
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://receiver').pathname;
      counts.set(path, (counts.get(path) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const queue = await startWebhookQueue({
    deliver: async () => ({ batchItemFailures: [] }),
    visibilityTimeoutSeconds: QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    maxReceiveCount: MAX_DELIVERY_ATTEMPTS,
  });
  return {
    // As the local service sets them (local/service.ts): the stand-in's URL as the SQS endpoint; http://127.0.0.1 receivers accepted.
    env: { [WEBHOOK_ENV.queueUrl]: queue.queueUrl, [WEBHOOK_ENV.sqsEndpoint]: queue.url, [WEBHOOK_ENV.allowLocalHttp]: 'true' },
    receiverOrigin: `http://127.0.0.1:${(receiver.address() as { port: number }).port}`,
    received: (path) => counts.get(path) ?? 0,
    async stop() {
      await queue.stop();
      await new Promise<void>((resolve) => {
        receiver.close(() => resolve());
        receiver.closeAllConnections();
      });
    },
  };
}
