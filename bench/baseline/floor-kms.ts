import { KMSClient } from '@aws-sdk/client-kms';

// The floor of the signing-key rotation (a floor with the `kmsClient` step): floor.ts's handler in a
// bundle that also carries the KMS client library, which the rotation needs to create, delete and
// name keys and carries whatever its mode, evaluated at load as in its bundle (one copy of the SDK's
// shared core with the DynamoDB client's, as floor-queue.ts does for SQS), and no client or request of it.

export { handler } from './floor.ts';
export const KeyClient = KMSClient;
