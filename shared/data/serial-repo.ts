import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { serialKey } from '#shared/data/item-keys';
import type { RepoOperations } from '#shared/data/table-access';

export type SerialRepo = ReturnType<typeof createSerialRepo>;

/**
 * What the hook may do with a serial: provision it as `deviceId`; `unknown` (not listed by the
 * operator); `used` (already provisioned with another certificate).
 */
export type SerialAdmission = { deviceId: string } | 'unknown' | 'used';

/**
 * The fleet provisioning allow-list: one item per serial number (`SERIAL#<serial>`) with the device id
 * it becomes, and, once a device has provisioned with it, the certificate it got. A serial admits one
 * certificate: a second device claiming the same serial (a copied serial, or a claim certificate
 * leaked from the factory) is refused, while IoT Core's retry of the same request is not.
 */
export function createSerialRepo({ doc, table }: RepoDeps) {
  return {
    /** Lists `serial` as device `deviceId`; false (nothing written) when the serial is listed already. */
    async allowSerial(serial: string, deviceId: string, now: Date): Promise<boolean> {
      try {
        await doc.send(new PutCommand({
          TableName: table,
          Item: { ...serialKey(serial), deviceId, listedAt: now.toISOString() },
          ConditionExpression: 'attribute_not_exists(pk)',
        }));
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
    },

    /**
     * Admits `certificateId` for `serial` in one conditional UpdateItem: the serial must be listed and
     * not yet provisioned with another certificate (the same one again is a retry, admitted again).
     */
    async admitSerial(serial: string, certificateId: string, now: Date): Promise<SerialAdmission> {
      try {
        const { Attributes } = await doc.send(new UpdateCommand({
          TableName: table,
          Key: serialKey(serial),
          UpdateExpression: 'SET certificateId = :cert, provisionedAt = if_not_exists(provisionedAt, :now)',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(certificateId) OR certificateId = :cert)',
          ExpressionAttributeValues: { ':cert': certificateId, ':now': now.toISOString() },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }));
        return { deviceId: String(Attributes!.deviceId) };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return (error as { Item?: unknown }).Item ? 'used' : 'unknown';
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const SERIAL_REPO_OPERATIONS = {
  allowSerial: { actions: ['PutItem'] },
  admitSerial: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<SerialRepo>;
