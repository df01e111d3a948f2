import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SQSEvent, SQSBatchResponse } from 'aws-lambda';

// SQS has no local engine. This stand-in speaks the part of SQS's JSON protocol the service's
// code sends (SendMessageBatch, ChangeMessageVisibility) on loopback, so the real SDK client runs
// unchanged, and plays Lambda's SQS event source: it hands visible messages, up to 10 at a time,
// to the delivery handler, deletes those not reported as failed, lets the others come back after
// their visibility timeout, and moves a message received `maxReceiveCount` times to its dead-letter
// list, as the queue's redrive policy does. Every timeout is multiplied by `timeScale`, so the real
// retry schedule runs compressed (0.001: 30 s become 30 ms).

export interface LocalQueueMessage {
  messageId: string;
  body: string;
  receiveCount: number;
  receiptHandle?: string;
  /** Epoch ms from which it can be received again. */
  visibleAt: number;
  /** Being handled: not received again until its invocation ends (Lambda's timeout is far below the queue's visibility timeout). */
  inFlight?: boolean;
}

export interface WebhookQueueStandIn {
  url: string;
  queueUrl: string;
  /** Messages moved to the dead-letter list (as the DLQ would hold them). */
  deadLetters(): LocalQueueMessage[];
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
}

const QUEUE_NAME = 'webhook-deliveries';

export async function startWebhookQueue(options: WebhookQueueOptions): Promise<WebhookQueueStandIn> {
  const scale = options.timeScale ?? 1;
  const messages: LocalQueueMessage[] = [];
  const dead: LocalQueueMessage[] = [];
  let inFlight = 0;
  let stopped = false;

  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const queueUrl = `${url}/000000000000/${QUEUE_NAME}`;

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(body));
    };
    if (operation === 'SendMessageBatch') {
      const entries = input.Entries as { Id: string; MessageBody: string; DelaySeconds?: number }[];
      const successful = entries.map((entry) => {
        const message = { messageId: randomUUID(), body: entry.MessageBody, receiveCount: 0, visibleAt: Date.now() + (entry.DelaySeconds ?? 0) * 1000 * scale };
        messages.push(message);
        return { Id: entry.Id, MessageId: message.messageId, MD5OfMessageBody: createHash('md5').update(entry.MessageBody).digest('hex') };
      });
      return reply(200, { Successful: successful, Failed: [] });
    }
    if (operation === 'ChangeMessageVisibility') {
      const message = messages.find((m) => m.receiptHandle === input.ReceiptHandle);
      if (!message) return reply(400, { __type: 'com.amazonaws.sqs#ReceiptHandleIsInvalid', message: 'The receipt handle is not valid.' });
      message.visibleAt = Date.now() + Number(input.VisibilityTimeout) * 1000 * scale;
      return reply(200, {});
    }
    return reply(400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `${operation} is not supported by the local stand-in.` });
  }

  function poll() {
    if (stopped) return;
    const now = Date.now();
    const ready: LocalQueueMessage[] = [];
    for (const message of [...messages]) {
      if (message.inFlight || message.visibleAt > now || ready.length >= (options.batchSize ?? 10)) continue;
      if (message.receiveCount >= options.maxReceiveCount) {
        messages.splice(messages.indexOf(message), 1);
        dead.push(message);
        continue;
      }
      message.receiveCount += 1;
      message.receiptHandle = randomUUID();
      message.visibleAt = now + options.visibilityTimeoutSeconds * 1000 * scale;
      message.inFlight = true;
      ready.push(message);
    }
    if (ready.length > 0) {
      inFlight += 1;
      const event: SQSEvent = {
        Records: ready.map((m) => ({
          messageId: m.messageId, receiptHandle: m.receiptHandle!, body: m.body,
          attributes: {
            ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: String(now), SenderId: 'local',
            ApproximateFirstReceiveTimestamp: String(now),
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
      });
    }
    timer = setTimeout(poll, 10);
  }
  let timer = setTimeout(poll, 10);

  return {
    url,
    queueUrl,
    deadLetters: () => [...dead],
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
