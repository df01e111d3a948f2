import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readSqsCall } from '#local/sqs-protocol';
import type { SQSEvent, SQSBatchResponse } from 'aws-lambda';
import { SQS_MAX_VISIBILITY_SECONDS } from '#shared/webhooks/deliver';

// SQS has no local engine. This stand-in speaks the part of SQS's JSON protocol the service's
// code sends (SendMessageBatch, ChangeMessageVisibility) on loopback, so the real SDK client runs
// unchanged, and plays Lambda's SQS event source: it hands visible messages, up to 10 at a time,
// to the delivery handler, deletes those not reported as failed, lets the others come back after
// their visibility timeout, and moves a message received `maxReceiveCount` times to its dead-letter
// list, as the queue's redrive policy does; with `maxConcurrency`, like the mapping's maximum
// concurrency, it receives nothing while that many invocations run. Every timeout is multiplied by
// `timeScale`, so the real retry schedule runs compressed (0.001: 30 s become 30 ms).
// It looks for messages every 10 ms only while one is visible and waiting (its batch not yet full, or
// held by the maximum concurrency); otherwise it sleeps until the next message turns visible, or,
// with none waiting, until one is sent or an invocation ends, as Lambda's long polls wait: an empty
// queue costs nothing.
//
// ChangeMessageVisibility follows SQS's rule: a message is invisible for at most 12 hours
// (SQS_MAX_VISIBILITY_SECONDS) counted from its receipt, and the new timeout counts from the call,
// so a VisibilityTimeout above what is left of those 12 hours (or not an integer from 0 to 43,200)
// is refused as SQS refuses it: HTTP 400, `InvalidParameterValue` (the SDK's error name, from the
// `x-amzn-query-error` header). Elapsed time is simulated time: real milliseconds since the receipt
// divided by 1000 × timeScale, so at 10⁻⁴ a handler that takes 10 ms has used 100 of the 12 hours'
// seconds (as everything else here, the handler's time is compressed too).

export interface LocalQueueMessage {
  messageId: string;
  body: string;
  receiveCount: number;
  receiptHandle?: string;
  /** When the current receipt happened (performance.now() ms). */
  receivedAt?: number;
  /** When it can be received again (performance.now() ms). */
  visibleAt: number;
  /** Being handled: not received again until its invocation ends (Lambda's timeout is far below the queue's visibility timeout). */
  inFlight?: boolean;
}

/** One ChangeMessageVisibility the stand-in answered. */
export interface VisibilityChange {
  messageId?: string;
  /** The receive the receipt handle belongs to (the attempt, for the delivery handler). */
  receiveCount?: number;
  /** The VisibilityTimeout asked, seconds. */
  visibilityTimeout: unknown;
  /** Simulated seconds since the receipt when the call came. */
  elapsedSeconds?: number;
  /** The SQS error code it was refused with, if it was. */
  refused?: string;
}

export interface WebhookQueueStandIn {
  url: string;
  queueUrl: string;
  /** Messages moved to the dead-letter list (as the DLQ would hold them). */
  deadLetters(): LocalQueueMessage[];
  /** Every ChangeMessageVisibility so far, accepted or refused, in order. */
  visibilityChanges(): VisibilityChange[];
  /** How many times it has looked for visible messages so far (every 10 ms while one waits). */
  polls(): number;
  /** Messages waiting or in flight. */
  pending(): number;
  /** Resolves once no message is waiting or in flight. */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

export interface WebhookQueueOptions {
  /** The delivery handler (as Lambda's event source mapping invokes it). */
  deliver(event: SQSEvent): Promise<SQSBatchResponse>;
  /** Multiplies every timeout (visibility, poll interval stays 10 ms). Default 1: real time. */
  timeScale?: number;
  /** The queue's default visibility timeout, seconds (the stack's). */
  visibilityTimeoutSeconds: number;
  /** Receives before a message is dead-lettered (the stack's redrive policy). */
  maxReceiveCount: number;
  batchSize?: number;
  /**
   * The event source mapping's maximum concurrency (the stack's): while this many invocations run,
   * nothing is received, so waiting messages keep their receive count. Default: no limit.
   */
  maxConcurrency?: number;
}

const QUEUE_NAME = 'webhook-deliveries';

export async function startWebhookQueue(options: WebhookQueueOptions): Promise<WebhookQueueStandIn> {
  const scale = options.timeScale ?? 1;
  /** Simulated seconds → real milliseconds, and back. */
  const realMs = (seconds: number) => seconds * 1000 * scale;
  const simulatedSeconds = (ms: number) => ms / 1000 / scale;
  const messages: LocalQueueMessage[] = [];
  const dead: LocalQueueMessage[] = [];
  const changes: VisibilityChange[] = [];
  let inFlight = 0;
  let polls = 0;
  let stopped = false;

  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const queueUrl = `${url}/000000000000/${QUEUE_NAME}`;

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const { operation, input, reply, refuse } = await readSqsCall(req, res);
    if (operation === 'SendMessageBatch') {
      const entries = input.Entries as { Id: string; MessageBody: string; DelaySeconds?: number }[];
      const successful = entries.map((entry) => {
        const message = { messageId: randomUUID(), body: entry.MessageBody, receiveCount: 0, visibleAt: performance.now() + realMs(entry.DelaySeconds ?? 0) };
        messages.push(message);
        schedule();
        return { Id: entry.Id, MessageId: message.messageId, MD5OfMessageBody: createHash('md5').update(entry.MessageBody).digest('hex') };
      });
      return reply(200, { Successful: successful, Failed: [] });
    }
    if (operation === 'ChangeMessageVisibility') {
      const now = performance.now();
      const timeout = input.VisibilityTimeout;
      const message = messages.find((m) => m.receiptHandle !== undefined && m.receiptHandle === input.ReceiptHandle);
      const change: VisibilityChange = { messageId: message?.messageId, receiveCount: message?.receiveCount, visibilityTimeout: timeout };
      changes.push(change);
      const invalid = (reason: string) => {
        change.refused = 'InvalidParameterValue';
        refuse(400, 'InvalidParameterValue', 'com.amazon.coral.service#InvalidParameterValueException',
          `Value ${String(timeout)} for parameter VisibilityTimeout is invalid. Reason: ${reason}`);
      };
      if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 0 || timeout > SQS_MAX_VISIBILITY_SECONDS) {
        return invalid(`Must be between 0 and ${SQS_MAX_VISIBILITY_SECONDS}, if provided.`);
      }
      if (!message) {
        change.refused = 'ReceiptHandleIsInvalid';
        return refuse(404, 'ReceiptHandleIsInvalid', 'com.amazonaws.sqs#ReceiptHandleIsInvalid', 'The receipt handle is not valid.');
      }
      change.elapsedSeconds = simulatedSeconds(now - message.receivedAt!);
      if (timeout > SQS_MAX_VISIBILITY_SECONDS - change.elapsedSeconds) {
        return invalid(`Total VisibilityTimeout for the message is beyond the limit [${SQS_MAX_VISIBILITY_SECONDS} seconds]`);
      }
      message.visibleAt = now + realMs(timeout);
      schedule();
      return reply(200, {});
    }
    return refuse(400, 'AWS.SimpleQueueService.UnsupportedOperation', 'com.amazonaws.sqs#UnsupportedOperation', `${operation} is not supported by the local stand-in.`);
  }

  function poll() {
    if (stopped) return;
    polls += 1;
    const now = performance.now();
    const ready: LocalQueueMessage[] = [];
    // At the mapping's maximum concurrency, Lambda receives nothing until an invocation ends.
    const full = inFlight >= (options.maxConcurrency ?? Infinity);
    for (const message of full ? [] : [...messages]) {
      if (message.inFlight || message.visibleAt > now || ready.length >= (options.batchSize ?? 10)) continue;
      if (message.receiveCount >= options.maxReceiveCount) {
        messages.splice(messages.indexOf(message), 1);
        dead.push(message);
        continue;
      }
      message.receiveCount += 1;
      message.receiptHandle = randomUUID();
      message.receivedAt = now;
      message.visibleAt = now + realMs(options.visibilityTimeoutSeconds);
      message.inFlight = true;
      ready.push(message);
    }
    if (ready.length > 0) {
      inFlight += 1;
      const sent = String(Date.now());
      const event: SQSEvent = {
        Records: ready.map((m) => ({
          messageId: m.messageId, receiptHandle: m.receiptHandle!, body: m.body,
          attributes: {
            ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: sent, SenderId: 'local',
            ApproximateFirstReceiveTimestamp: sent,
          },
          messageAttributes: {}, md5OfBody: createHash('md5').update(m.body).digest('hex'),
          eventSource: 'aws:sqs', eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${QUEUE_NAME}`, awsRegion: 'us-east-1',
        })),
      };
      // Not awaited: like Lambda's concurrent batches, a slow receiver does not hold up the next batch.
      void options.deliver(event).then(
        ({ batchItemFailures }) => {
          const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
          for (const m of ready) if (!failed.has(m.messageId) && messages.includes(m)) messages.splice(messages.indexOf(m), 1);
        },
        () => undefined, // The whole batch failed: every message comes back after its visibility timeout.
      ).finally(() => {
        for (const m of ready) m.inFlight = false;
        inFlight -= 1;
        schedule();
      });
    }
    timer = undefined;
    schedule();
  }

  /** The next look: in 10 ms while a message is visible and waiting, else when the first invisible one turns visible; none when nothing waits. */
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  function schedule() {
    if (stopped) return;
    const now = performance.now();
    let next = Infinity;
    for (const message of messages) {
      if (message.inFlight) continue;
      next = Math.min(next, message.visibleAt <= now ? now + 10 : message.visibleAt);
    }
    if (next === Infinity || (timer && timerAt <= next)) return;
    clearTimeout(timer);
    timerAt = next;
    timer = setTimeout(poll, Math.max(0, next - now));
  }

  return {
    url,
    queueUrl,
    deadLetters: () => [...dead],
    visibilityChanges: () => changes.map((c) => ({ ...c })),
    polls: () => polls,
    pending: () => messages.length + inFlight,
    async drained() {
      while (messages.length > 0 || inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // Lets the invocations under way finish (each attempt gives up after 5 s) before the table goes.
      const deadline = Date.now() + 7000;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
