import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AWS_ENV, WEBHOOK_ENV } from '#shared/config';
import { libraries } from './floor.ts';

// The floor of the functions that queue webhook deliveries or carry the queue's client (a floor
// with the `queueClient` or `queueSend` step): floor.ts's handler in a bundle that also carries the
// SQS client library, evaluated at load as in those functions' bundles (one copy of the SDK's shared
// core with the DynamoDB client's). No client exists until a `queueSend` step needs one: then an SQS
// client configured as shared/webhooks/queue.ts configures it (written out here: the floor imports
// nothing of the service), sending to WEBHOOK_QUEUE_URL (locally the SQS stand-in of WEBHOOK_SQS_ENDPOINT).

export { handler } from './floor.ts';
export const QueueClient = SQSClient;

let client: SQSClient | undefined;
libraries.sendToQueue = async (body) => {
  const endpoint = process.env[WEBHOOK_ENV.sqsEndpoint] || undefined;
  client ??= new SQSClient(endpoint === undefined
    ? {}
    : { endpoint, region: process.env[AWS_ENV.region] ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { Failed = [] } = await client.send(new SendMessageBatchCommand({
    QueueUrl: process.env[WEBHOOK_ENV.queueUrl] ?? '', Entries: [{ Id: '0', MessageBody: body }],
  }));
  if (Failed.length > 0) throw new Error(`the queue refused the floor's message: ${Failed[0]?.Code ?? 'unknown'}`);
};
