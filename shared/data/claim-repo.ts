import { GetCommand, TransactWriteCommand, UpdateCommand } from '#shared/data/commands';
import type { RepoOperations } from '#shared/data/table-access';
import { toDevice, type Device } from '#shared/domain/device';
import type { Consent } from '#shared/domain/grant';
import { ConflictError } from '#shared/errors';
import { cancellationCodes, isCancelled, isConditionalCheckFailed, type RepoDeps, type TransactItem } from '#shared/data/dynamodb';
import {
  claimCodeKey, claimEntriesKey, consentKey, deviceByIdIndexKey, deviceKey, fromItem, unclaimedDeviceKey,
} from '#shared/data/item-keys';
import { countEntries, type EntryLimits } from '#shared/data/user-code-repo';

/** A device that belongs to nobody: its fields, and what it keeps from owner to owner. */
export interface UnclaimedDevice {
  device: Device;
  /** The id of its certificate (IoT Core's certificateId), when it was given an IoT identity. */
  certificateId?: string;
  /** The hash of its live claim code: only that code claims it (absent once removed, until a new one is issued). */
  claimCodeHash?: string;
  /** Every other stored attribute (the sequence of its webhook events, its presence), carried to the next owner. */
  rest: Record<string, unknown>;
}

export type ClaimRepo = ReturnType<typeof createClaimRepo>;

/** Attributes of an owned device's item that are about its owner, not the device: dropped when it is freed. */
const OWNER_ATTRIBUTES = new Set(['ownerId', 'seenBy', 'releasing', 'gsi1pk', 'gsi1sk']);

function toUnclaimed(item: Record<string, unknown>): UnclaimedDevice {
  const { certificateId, claimCodeHash, ...rest } = fromItem<Record<string, unknown>>(item);
  return {
    device: toDevice(rest), rest, ...(typeof certificateId === 'string' ? { certificateId } : {}), ...(typeof claimCodeHash === 'string' ? { claimCodeHash } : {}),
  };
}

/**
 * Devices changing hands: provisioned to nobody with a claim code, claimed into an owner's partition
 * by that code (single use), and freed again by their owner. Ownership is part of a device's key, so
 * each change moves the item, in one transaction with what must change with it.
 */
export function createClaimRepo({ doc, table }: RepoDeps) {
  const putCode = (codeHash: string, deviceId: string): TransactItem => ({
    Put: { TableName: table, Item: { ...claimCodeKey(codeHash), deviceId }, ConditionExpression: 'attribute_not_exists(pk)' },
  });
  return {
    /** The device a claim code names (one consistent GetItem), or undefined. */
    async getClaimCode(codeHash: string): Promise<{ deviceId: string } | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: claimCodeKey(codeHash), ConsistentRead: true }));
      return Item ? { deviceId: String(Item.deviceId) } : undefined;
    },

    /** Counts one claim code entry of `userId` from `address` if both are below their limits (see countEntries). */
    countClaimEntry(userId: string, address: string, limits: EntryLimits, now: Date): Promise<boolean> {
      return countEntries({ doc, table }, claimEntriesKey, userId, address, limits, now);
    },

    /** A device that belongs to nobody, by its id (one consistent GetItem), or undefined. */
    async getUnclaimedDevice(deviceId: string): Promise<UnclaimedDevice | undefined> {
      const { Item } = await doc.send(new GetCommand({ TableName: table, Key: unclaimedDeviceKey(deviceId), ConsistentRead: true }));
      return Item ? toUnclaimed(Item) : undefined;
    },

    /**
     * Provisions a device that belongs to nobody, with its claim code (by its hash) and its
     * certificate's id: one transaction of two conditional puts. ConflictError, and nothing written,
     * when the device exists unclaimed (an owned one is the caller's to look for: findDeviceOwner).
     */
    async createUnclaimedDevice(device: Device, codeHash: string, certificateId?: string): Promise<void> {
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: table, ConditionExpression: 'attribute_not_exists(pk)',
                Item: { ...unclaimedDeviceKey(device.id), ...device, seq: 1, claimCodeHash: codeHash, ...(certificateId ? { certificateId } : {}) },
              },
            },
            putCode(codeHash, device.id),
          ],
        }));
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error).includes('ConditionalCheckFailed')) throw new ConflictError(`Device ${device.id} already exists.`);
        throw error;
      }
    },

    /**
     * Gives a device that belongs to nobody a new claim code and, when given, a new certificate (a
     * device reset for its next owner): the item is updated to name them, the code written, and the
     * previous code (if any) deleted, in one transaction; false, and nothing written, when the device
     * is not unclaimed as read.
     */
    async reissueClaim(unclaimed: UnclaimedDevice, codeHash: string, certificateId?: string): Promise<boolean> {
      const id = unclaimed.device.id;
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table, Key: unclaimedDeviceKey(id),
                UpdateExpression: `SET claimCodeHash = :code${certificateId ? ', certificateId = :cert' : ''}`,
                ConditionExpression: unclaimed.claimCodeHash ? 'claimCodeHash = :old' : 'attribute_exists(pk) AND attribute_not_exists(claimCodeHash)',
                ExpressionAttributeValues: {
                  ':code': codeHash, ...(certificateId ? { ':cert': certificateId } : {}), ...(unclaimed.claimCodeHash ? { ':old': unclaimed.claimCodeHash } : {}),
                },
              },
            },
            putCode(codeHash, id),
            ...(unclaimed.claimCodeHash ? [{ Delete: { TableName: table, Key: claimCodeKey(unclaimed.claimCodeHash) } }] : []),
          ],
        }));
        return true;
      } catch (error) {
        if (isCancelled(error) && cancellationCodes(error).includes('ConditionalCheckFailed')) return false;
        throw error;
      }
    },

    /**
     * Claims a device for `userId` with its code: one transaction that deletes the code and the
     * unclaimed item (each on condition that it is still the one read: a code is used once) and puts
     * the device in the user's partition, one write on in its sequence (its `device.added`). Says
     * whether it was claimed; nothing is written when it was not (a concurrent claim won).
     */
    async claimDevice(userId: string, codeHash: string, unclaimed: UnclaimedDevice): Promise<boolean> {
      const id = unclaimed.device.id;
      const seq = Number(unclaimed.rest.seq ?? 0) + 1;
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: table, Key: claimCodeKey(codeHash), ConditionExpression: 'deviceId = :id', ExpressionAttributeValues: { ':id': id } } },
            { Delete: { TableName: table, Key: unclaimedDeviceKey(id), ConditionExpression: 'claimCodeHash = :code', ExpressionAttributeValues: { ':code': codeHash } } },
            {
              Put: {
                TableName: table, ConditionExpression: 'attribute_not_exists(pk)',
                Item: {
                  ...unclaimed.rest, ...deviceKey(userId, id), ...deviceByIdIndexKey(id), ownerId: userId, seq,
                  ...(unclaimed.certificateId ? { certificateId: unclaimed.certificateId } : {}),
                },
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

    /**
     * First step of freeing a device: marks the owner's device with the applications that see it
     * (`seenBy`, what its `device.removed` goes to once the consents no longer name it) and a token
     * the second step checks. One conditional UpdateItem; the device as it now is, or undefined when
     * the user owns no such device.
     */
    async markReleasing(userId: string, deviceId: string, seenBy: readonly string[], token: string): Promise<Record<string, unknown> | undefined> {
      try {
        const { Attributes } = await doc.send(new UpdateCommand({
          TableName: table, Key: deviceKey(userId, deviceId), ConditionExpression: 'attribute_exists(pk)',
          UpdateExpression: 'SET seenBy = :seen, releasing = :token', ExpressionAttributeValues: { ':seen': [...seenBy], ':token': token },
          ReturnValues: 'ALL_NEW',
        }));
        return Attributes;
      } catch (error) {
        if (isConditionalCheckFailed(error)) return undefined;
        throw error;
      }
    },

    /**
     * Second step: one transaction that deletes the owner's device (on condition that it still
     * carries `token`), puts it back as belonging to nobody (no claim code, disconnected), and
     * rewrites each consent that names it without it (`consents`: as read, each on condition that it
     * is unchanged), marking the rewrite as a release so that it tells no application of a grant
     * change. False, and nothing written, when anything changed since the read.
     */
    async releaseDevice(item: Record<string, unknown>, token: string, consents: readonly Consent[]): Promise<boolean> {
      const userId = String(item.ownerId);
      const id = String(item.id);
      const kept = Object.fromEntries(Object.entries(fromItem<Record<string, unknown>>(item)).filter(([name]) => !OWNER_ATTRIBUTES.has(name)));
      try {
        await doc.send(new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: table, Key: deviceKey(userId, id), ConditionExpression: 'releasing = :token', ExpressionAttributeValues: { ':token': token } } },
            {
              // The removal is one more write of the device: the next owner's sequence starts past it.
              Put: {
                TableName: table, ConditionExpression: 'attribute_not_exists(pk)',
                Item: { ...kept, ...unclaimedDeviceKey(id), connected: false, seq: Number(item.seq ?? 0) + 1 },
              },
            },
            ...consents.map((consent) => consentReleaseItem(table, consent, id, token)),
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

/** The update of a consent that names a freed device: without it, one revision on, on condition that it is the one read. */
function consentReleaseItem(table: string, consent: Consent, deviceId: string, token: string): TransactItem {
  const only = consent.onlyDevices?.filter((id) => id !== deviceId);
  const except = consent.exceptDevices?.filter((id) => id !== deviceId);
  const sets = ['revision = :next', 'deviceRelease = :release', ...(only ? ['onlyDevices = :only'] : []), ...(except?.length ? ['exceptDevices = :except'] : [])];
  return {
    Update: {
      TableName: table, Key: consentKey(consent.userId, consent.clientId),
      // An exception list left empty shares every device: the same as no list.
      UpdateExpression: `SET ${sets.join(', ')}${except && except.length === 0 ? ' REMOVE exceptDevices' : ''}`,
      ConditionExpression: consent.revision === undefined ? 'attribute_exists(pk) AND attribute_not_exists(revision)' : 'revision = :revision',
      ExpressionAttributeValues: {
        ':next': (consent.revision ?? 0) + 1, ':release': `${deviceId} ${token}`,
        ...(only ? { ':only': only } : {}), ...(except?.length ? { ':except': except } : {}),
        ...(consent.revision === undefined ? {} : { ':revision': consent.revision }),
      },
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const CLAIM_REPO_OPERATIONS = {
  getClaimCode: { actions: ['GetItem'] },
  countClaimEntry: { actions: ['UpdateItem'] },
  getUnclaimedDevice: { actions: ['GetItem'] },
  createUnclaimedDevice: { actions: ['PutItem'] },
  reissueClaim: { actions: ['UpdateItem', 'PutItem', 'DeleteItem'] },
  claimDevice: { actions: ['DeleteItem', 'PutItem'] },
  markReleasing: { actions: ['UpdateItem'] },
  releaseDevice: { actions: ['DeleteItem', 'PutItem', 'UpdateItem'] },
} as const satisfies RepoOperations<ClaimRepo>;
