import type { RepoOperations } from '#shared/data/table-access';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import { toDevice, type Device, type DeviceChanges } from '#shared/domain/device';
import { ConflictError, NotFoundError } from '#shared/errors';
import { deviceVisible, type DeviceChoice } from '#shared/domain/grant';
import { createBatchReader } from '#shared/data/batch-read';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, queryAll, type RepoDeps } from '#shared/data/dynamodb';
import { consentKey, deviceByIdIndexKey, deviceKey, devicesOfUserKey, devicesSeenByClientRange } from '#shared/data/item-keys';

export type DeviceRepo = ReturnType<typeof createDeviceRepo>;

/**
 * Access patterns on devices. Every device is read and written through its owner's key. Every write
 * adds one to the device's `seq` (not part of the public device): the sequence number of its
 * webhook events, so receivers can drop stale or duplicate ones.
 */
export function createDeviceRepo({ doc, table }: RepoDeps) {
  const batch = createBatchReader({ doc, table });
  return {
    /** All devices of a user, in id order. One Query (more only past 1 MB of devices). */
    async listDevicesByOwner(userId: string): Promise<Device[]> {
      const { pk, skPrefix } = devicesOfUserKey(userId);
      const items = await queryAll({ doc, table }, {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      });
      return items.map(toDevice);
    },

    /** The user's device, or undefined when it does not exist or belongs to someone else. One GetItem. */
    async getOwnedDevice(userId: string, deviceId: string): Promise<Device | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: deviceKey(userId, deviceId) }));
      return Item ? toDevice(Item) : undefined;
    },

    /**
     * Applies the present members to the user's device in one conditional UpdateItem.
     * Throws NotFoundError when the user owns no such device; then nothing is written.
     * An empty change set is a no-op that still tells whether the device exists (one GetItem).
     */
    async updateOwnedDevice(userId: string, deviceId: string, changes: DeviceChanges): Promise<void> {
      const entries = Object.entries(changes);
      if (entries.length === 0) {
        if (!(await this.getOwnedDevice(userId, deviceId))) throw new NotFoundError();
        return;
      }
      try {
        await doc.send(new UpdateCommand(deviceUpdate(table, userId, deviceId, changes)));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new NotFoundError();
        throw error;
      }
    },

    /**
     * The devices of a user that an application sees (its consent's device choice,
     * domain/grant.ts deviceVisible; every device without a consent), in id order: one Query of the user's partition
     * from the consent through the devices (devicesSeenByClientRange), more only past 1 MB.
     */
    async listDevicesSeenBy(userId: string, clientId: string): Promise<Device[]> {
      const range = devicesSeenByClientRange(userId, clientId);
      const items = await queryAll({ doc, table }, {
        // A Query cannot filter on the key: the other applications' consents in the range are dropped below.
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': range.pk, ':from': range.from, ':to': range.to },
      });
      const consent = items.find((item) => item.sk === range.from) as DeviceChoice | undefined;
      return items.filter((item) => String(item.sk).startsWith(range.devicePrefix)).map(toDevice).filter((device) => deviceVisible(consent, device.id));
    },

    /** The user's device if the application sees it (else undefined, as for another user's): one BatchGetItem of the device and the consent. */
    async getDeviceSeenBy(userId: string, deviceId: string, clientId: string): Promise<Device | undefined> {
      const [device, consent] = await batch.getItems([deviceKey(userId, deviceId), consentKey(userId, clientId)]);
      return device && deviceVisible(consent as DeviceChoice | undefined, deviceId) ? toDevice(device) : undefined;
    },

    /**
     * Applies the present members to the user's device, if the application sees it: one transaction
     * of a ConditionCheck of the consent's device choice (passes without a consent) and the
     * device's conditional update. NotFoundError, and nothing written, for a device the user does
     * not own or the application does not see. An empty change set only reads (getDeviceSeenBy).
     */
    async updateDeviceSeenBy(userId: string, deviceId: string, clientId: string, changes: DeviceChanges): Promise<void> {
      const entries = Object.entries(changes);
      if (entries.length === 0) {
        if (!(await this.getDeviceSeenBy(userId, deviceId, clientId))) throw new NotFoundError();
        return;
      }
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: table,
                Key: consentKey(userId, clientId),
                ConditionExpression: 'attribute_not_exists(pk) OR ((attribute_not_exists(onlyDevices) OR contains(onlyDevices, :device)) '
                  + 'AND (attribute_not_exists(exceptDevices) OR NOT contains(exceptDevices, :device)))',
                ExpressionAttributeValues: { ':device': deviceId },
              },
            },
            { Update: deviceUpdate(table, userId, deviceId, changes) },
          ],
        }));
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error).includes('ConditionalCheckFailed')) throw new NotFoundError();
        throw error;
      }
    },

    /** The owner of a device, found by the device id alone (operators). One Query on GSI1. */
    async findDeviceOwner(deviceId: string): Promise<string | undefined> {
      const { gsi1pk } = deviceByIdIndexKey(deviceId);
      const { Items = [] } = await doc.send(new QueryCommand({
        TableName: table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': gsi1pk },
      }));
      return Items[0]?.ownerId as string | undefined;
    },

    /** Records a device's connection state as reported by the cloud link (operators). NotFoundError if absent. */
    async setConnection(ownerId: string, deviceId: string, connected: boolean, at: string): Promise<void> {
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: deviceKey(ownerId, deviceId),
          UpdateExpression: connected ? 'SET connected = :c, last_connection = :at ADD seq :one' : 'SET connected = :c ADD seq :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: connected ? { ':c': true, ':at': at, ':one': 1 } : { ':c': false, ':one': 1 },
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new NotFoundError();
        throw error;
      }
    },

    /** Provisions a device for its owner (operators and seed data); ConflictError if it exists. */
    async createDevice(ownerId: string, device: Device): Promise<void> {
      try {
        await doc.send(new PutCommand({
          TableName: table,
          Item: { ...deviceKey(ownerId, device.id), ...deviceByIdIndexKey(device.id), ownerId, ...device, seq: 1 },
          ConditionExpression: 'attribute_not_exists(pk)',
        }));
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw new ConflictError(`Device ${device.id} already exists.`);
        throw error;
      }
    },
  };
}

/**
 * The update that applies the present members to an existing device, adding one to its `seq` (the
 * sequence of its webhook events): alone, or in a transaction. A change of a device-side member
 * (`active`, `sound`) is the owner's command to the device: `commandSeq` takes the write's `seq`,
 * which the device shadow's functions read (shared/domain/shadow.ts).
 */
function deviceUpdate(table: string, userId: string, deviceId: string, changes: DeviceChanges) {
  const entries = Object.entries(changes);
  const command = 'active' in changes || 'sound' in changes ? ', commandSeq = seq + :one' : '';
  return {
    TableName: table,
    Key: deviceKey(userId, deviceId),
    UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}${command} ADD seq :one`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])),
    ExpressionAttributeValues: { ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])), ':one': 1 },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const DEVICE_REPO_OPERATIONS = {
  listDevicesByOwner: { actions: ['Query'] },
  getOwnedDevice: { actions: ['GetItem'] },
  // An empty change set only reads the device, to answer 404 for a device that is not the caller's.
  updateOwnedDevice: { actions: ['UpdateItem', 'GetItem'] },
  listDevicesSeenBy: { actions: ['Query'] },
  getDeviceSeenBy: { actions: ['BatchGetItem'] },
  // The consent's check and the device's update, in one transaction; an empty change set only reads.
  updateDeviceSeenBy: { actions: ['ConditionCheckItem', 'UpdateItem', 'BatchGetItem'] },
  findDeviceOwner: { actions: [], index: true },
  setConnection: { actions: ['UpdateItem'] },
  createDevice: { actions: ['PutItem'] },
} as const satisfies RepoOperations<DeviceRepo>;
