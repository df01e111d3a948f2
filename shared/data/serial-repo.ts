import { GetCommand, PutCommand, TransactWriteCommand } from '#shared/data/commands';
import type { RepoOperations } from '#shared/data/table-access';
import { ConflictError } from '#shared/errors';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { deviceKey, factorySerialKey, unclaimedDeviceKey } from '#shared/data/item-keys';

/** A serial number of the factory's allow-list: the device it becomes, and whether it was provisioned. */
export interface FactorySerial {
  deviceId: string;
  status: 'allowed' | 'provisioned';
  certificateId?: string;
}

export type SerialRepo = ReturnType<typeof createSerialRepo>;

/**
 * The factory's allow-list for fleet provisioning by claim: each serial number names the device
 * (provisioned to nobody, with its claim code) that it becomes, and is used once: the pre-provisioning
 * hook takes it and records the device's certificate in one transaction.
 */
export function createSerialRepo({ doc, table }: RepoDeps) {
  return {
    /** Adds a serial to the allow-list for `deviceId` (operators); ConflictError, nothing written, when it is there already. */
    async allowSerial(serial: string, deviceId: string): Promise<void> {
      try {
        await doc.send(new PutCommand({
          TableName: table, Item: { ...factorySerialKey(serial), deviceId, status: 'allowed' }, ConditionExpression: 'attribute_not_exists(pk)',
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new ConflictError(`Serial ${serial} is on the allow-list already.`);
        throw error;
      }
    },

    /** A serial of the allow-list (one consistent GetItem), or undefined. */
    async getSerial(serial: string): Promise<FactorySerial | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: factorySerialKey(serial), ConsistentRead: true }));
      return Item ? { deviceId: String(Item.deviceId), status: Item.status === 'provisioned' ? 'provisioned' : 'allowed', ...(Item.certificateId ? { certificateId: String(Item.certificateId) } : {}) } : undefined;
    },

    /**
     * Uses a serial up for the certificate a device is being provisioned with: one transaction that
     * marks the serial provisioned (if it was only allowed) and records the certificate on its device,
     * which must have none: the device of nobody's, or, with `ownerId`, the one its owner claimed
     * (from its label) before its first start. False, and nothing written, otherwise.
     */
    async takeSerial(serial: string, deviceId: string, certificateId: string, ownerId?: string): Promise<boolean> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table, Key: factorySerialKey(serial), UpdateExpression: 'SET #status = :provisioned, certificateId = :cert',
                ConditionExpression: '#status = :allowed AND deviceId = :device', ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':provisioned': 'provisioned', ':allowed': 'allowed', ':cert': certificateId, ':device': deviceId },
              },
            },
            {
              Update: {
                TableName: table, Key: ownerId ? deviceKey(ownerId, deviceId) : unclaimedDeviceKey(deviceId), UpdateExpression: 'SET certificateId = :cert',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(certificateId)', ExpressionAttributeValues: { ':cert': certificateId },
              },
            },
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error).includes('ConditionalCheckFailed')) return false;
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const SERIAL_REPO_OPERATIONS = {
  allowSerial: { actions: ['PutItem'] },
  getSerial: { actions: ['GetItem'] },
  takeSerial: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<SerialRepo>;
