import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One request of SQS's JSON protocol to a local queue stand-in, and the ways to answer it. */
export interface SqsCall {
  /** The action, without its `AmazonSQS.` prefix (`SendMessageBatch`). */
  operation: string;
  input: Record<string, unknown>;
  reply(status: number, body: unknown, headers?: Record<string, string>): void;
  /** An error as SQS answers it. */
  refuse(status: number, code: string, type: string, message: string): void;
}

/**
 * Reads a request of SQS's JSON protocol (the action in `x-amz-target`, the input as JSON), as the
 * real SDK client sends it to the local queue stand-ins (local/webhook-queue.ts, local/failure-queue.ts).
 */
export async function readSqsCall(req: IncomingMessage, res: ServerResponse): Promise<SqsCall> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
  const operation = String(req.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID(), ...headers });
    res.end(JSON.stringify(body));
  };
  // SQS's JSON protocol keeps the query protocol's error code in `x-amzn-query-error` (code;Sender),
  // which the SDK (awsQueryCompatible) names its error after; `__type` is the JSON shape's name.
  const refuse = (status: number, code: string, type: string, message: string) => reply(status, { __type: type, message }, { 'x-amzn-query-error': `${code};Sender` });
  return { operation, input, reply, refuse };
}
