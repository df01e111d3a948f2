import { UpdateCommand } from '#shared/data/commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RepoOperations } from '#shared/data/table-access';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { deviceKey } from '#shared/data/item-keys';
import type { LifecycleEvent } from '#shared/domain/presence';
import { formatTimestamp } from '#shared/domain/time';

export type PresenceRepo = ReturnType<typeof createPresenceRepo>;

/**
 * What one lifecycle event did to its device: `applied`; `late-connect` (the connect of a connection
 * whose disconnect was applied first: only `last_connection` moved); `stale` (the device has already
 * seen this event or a later one: a duplicate, or an event that arrived after a newer one);
 * `no-device` (the device is gone: deleted between the owner's look-up and the write).
 */
export type PresenceOutcome = 'applied' | 'late-connect' | 'stale' | 'no-device';

/** Whether `event` is the connect of the connection the stored device last saw disconnect, and later than its last connection. */
function isLateConnect(stored: Record<string, unknown>, event: LifecycleEvent): boolean {
  return stored.presenceVersion === event.versionNumber && stored.presenceEvent === 'disconnected'
    && String(stored.last_connection ?? '') < formatTimestamp(new Date(event.timestamp));
}

/**
 * Presence on the device item. Beside the public `connected` and `last_connection`, the item keeps
 * the last applied lifecycle event: its connection number (`presenceVersion`), its type
 * (`presenceEvent`) and its timestamp (`presenceAt`, epoch ms); toDevice projects none of them.
 */
export function createPresenceRepo({ doc, table }: RepoDeps) {
  return {
    /**
     * Applies a lifecycle event to the owner's device in one conditional UpdateItem, only when it is
     * newer than the last one applied: a connection with a higher number than any seen, or the end
     * (disconnect) of the connection last seen connecting. So a repeated event, a connect that arrives
     * after its own disconnect, and a disconnect of an older connection after a newer connect all
     * leave the device as it is (`stale`), written by nobody; except that a connect arriving after
     * its own disconnect still moves `last_connection` (recordLateConnect: a second write, on that
     * reordering only). A connect sets `connected` and `last_connection` (the event's time); a
     * disconnect sets only `connected`. Like every device write, an applied event adds one to `seq`.
     */
    async applyPresence(ownerId: string, event: LifecycleEvent): Promise<PresenceOutcome> {
      const connect = event.eventType === 'connected';
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: deviceKey(ownerId, event.deviceId),
          UpdateExpression: connect
            ? 'SET connected = :true, last_connection = :at, presenceVersion = :v, presenceEvent = :type, presenceAt = :ts ADD seq :one'
            : 'SET connected = :false, presenceVersion = :v, presenceEvent = :type, presenceAt = :ts ADD seq :one',
          ConditionExpression: connect
            ? 'attribute_exists(pk) AND (attribute_not_exists(presenceVersion) OR presenceVersion < :v)'
            : 'attribute_exists(pk) AND (attribute_not_exists(presenceVersion) OR presenceVersion < :v '
              + 'OR (presenceVersion = :v AND presenceEvent = :connected))',
          ExpressionAttributeValues: {
            ':v': event.versionNumber, ':type': event.eventType, ':ts': event.timestamp, ':one': 1,
            ...(connect ? { ':true': true, ':at': formatTimestamp(new Date(event.timestamp)) } : { ':false': false, ':connected': 'connected' }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }));
        return 'applied';
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
        if (!old) return 'no-device';
        return connect && isLateConnect(unmarshall(old), event) ? this.recordLateConnect(ownerId, event) : 'stale';
      }
    },

    /**
     * The connect of the connection whose disconnect came first: the device stays disconnected, but
     * it did connect then, so `last_connection` moves to the event's time if that is later (a second
     * conditional UpdateItem, only on this reordering). `stale` when another write got there first.
     */
    async recordLateConnect(ownerId: string, event: LifecycleEvent): Promise<PresenceOutcome> {
      const at = formatTimestamp(new Date(event.timestamp));
      try {
        await doc.send(new UpdateCommand({
          TableName: table,
          Key: deviceKey(ownerId, event.deviceId),
          UpdateExpression: 'SET last_connection = :at ADD seq :one',
          ConditionExpression: 'presenceVersion = :v AND presenceEvent = :disconnected AND last_connection < :at',
          ExpressionAttributeValues: { ':at': at, ':v': event.versionNumber, ':disconnected': 'disconnected', ':one': 1 },
        }));
        return 'late-connect';
      } catch (error) {
        if (isConditionalCheckFailed(error)) return 'stale';
        throw error;
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const PRESENCE_REPO_OPERATIONS = {
  applyPresence: { actions: ['UpdateItem'] },
  recordLateConnect: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<PresenceRepo>;
