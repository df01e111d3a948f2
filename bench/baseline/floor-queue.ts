import { SQSClient } from '@aws-sdk/client-sqs';

// The floor of the functions that queue webhook deliveries (a floor with the `queueClient` step):
// floor.ts's handler in a bundle that also carries the SQS client library, evaluated at load as in
// those functions' bundles (one copy of the SDK's shared core with the DynamoDB client's), and no
// client or request of it.

export { handler } from './floor.ts';
export const QueueClient = SQSClient;
