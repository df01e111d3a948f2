import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readSqsCall } from '#local/sqs-protocol';

// The fan-out's on-failure destination, locally: a queue without a consumer that speaks the part of
// SQS's JSON protocol the replay sends with the real SDK client (ReceiveMessage, DeleteMessage; and
// SendMessage), on loopback. The local stream reader puts Lambda's on-failure records in it (`put`),
// as Lambda does in AWS. A received message is invisible for its visibility timeout, then comes back.

export interface FailureQueueMessage {
  messageId: string;
  body: string;
  receiptHandle?: string;
  /** When it can be received again (performance.now() ms). */
  visibleAt: number;
}

export interface FailureQueueStandIn {
  /** The endpoint to give the SQS client. */
  url: string;
  queueUrl: string;
  /** Adds a message, as Lambda sends an on-failure record. */
  put(body: string): void;
  /** The messages in the queue, visible or not (bodies). */
  bodies(): string[];
  /** Every received message visible again at once, as when its visibility timeout has run out. */
  endReceipts(): void;
  stop(): Promise<void>;
}

const QUEUE_NAME = 'webhook-stream-failures';

export async function startFailureQueue(): Promise<FailureQueueStandIn> {
  const messages: FailureQueueMessage[] = [];
  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const queueUrl = `${url}/000000000000/${QUEUE_NAME}`;
  const put = (body: string) => {
    const message = { messageId: randomUUID(), body, visibleAt: 0 };
    messages.push(message);
    return message;
  };
  const md5 = (body: string) => createHash('md5').update(body).digest('hex');

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const { operation, input, reply, refuse } = await readSqsCall(req, res);
    if (input.QueueUrl !== queueUrl) return refuse(400, 'AWS.SimpleQueueService.NonExistentQueue', 'com.amazonaws.sqs#QueueDoesNotExist', 'The specified queue does not exist.');
    if (operation === 'SendMessage') {
      const message = put(String(input.MessageBody));
      return reply(200, { MessageId: message.messageId, MD5OfMessageBody: md5(message.body) });
    }
    if (operation === 'ReceiveMessage') {
      const now = performance.now();
      const max = Number(input.MaxNumberOfMessages ?? 1);
      const timeout = Number(input.VisibilityTimeout ?? 30);
      const received = messages.filter((m) => m.visibleAt <= now).slice(0, max);
      for (const m of received) {
        m.receiptHandle = randomUUID();
        m.visibleAt = now + timeout * 1000;
      }
      return reply(200, received.length === 0 ? {} : {
        Messages: received.map((m) => ({ MessageId: m.messageId, ReceiptHandle: m.receiptHandle, MD5OfBody: md5(m.body), Body: m.body })),
      });
    }
    if (operation === 'DeleteMessage') {
      const index = messages.findIndex((m) => m.receiptHandle !== undefined && m.receiptHandle === input.ReceiptHandle);
      if (index < 0) return refuse(400, 'ReceiptHandleIsInvalid', 'com.amazonaws.sqs#ReceiptHandleIsInvalid', 'The receipt handle is not valid.');
      messages.splice(index, 1);
      return reply(200, {});
    }
    return refuse(400, 'AWS.SimpleQueueService.UnsupportedOperation', 'com.amazonaws.sqs#UnsupportedOperation', `${operation} is not supported by the local stand-in.`);
  }

  return {
    url,
    queueUrl,
    put: (body) => void put(body),
    bodies: () => messages.map((m) => m.body),
    endReceipts: () => {
      for (const m of messages) m.visibleAt = 0;
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
