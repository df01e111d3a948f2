import { UpdateCommand } from '#shared/data/commands';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RepoOperations } from '#shared/data/table-access';
import { isConditionalCheckFailed, type RepoDeps } from '#shared/data/dynamodb';
import { deviceKey } from '#shared/data/item-keys';
import type { ShadowReport } from '#shared/domain/shadow';

export type ShadowRepo = ReturnType<typeof createShadowRepo>;

/**
 * What one device report did to its device item: `applied`; `overridden` (the owner has commanded
 * the device since the command it reports having applied: its `active` and `sound` are left as the
 * owner set them, its other members applied); `stale` (a report of this shadow version or a later
 * one was applied already: a repeat, or one that arrived late); `no-device` (the device is gone).
 */
export type ReportOutcome = 'applied' | 'overridden' | 'stale' | 'no-device';

const isNewer = (old: Record<string, unknown>, version: number) => typeof old.shadowVersion !== 'number' || old.shadowVersion < version;

/**
 * Device reports on the device item. Beside the public fields a report sets, the item keeps the
 * shadow version of the last report applied (`shadowVersion`; toDevice projects it not), which
 * orders reports; and the owner's last command (`commandSeq`, set by the PUT), which a report must
 * have applied before its `active` and `sound` count.
 */
export function createShadowRepo({ doc, table }: RepoDeps) {
  const write = (ownerId: string, report: ShadowReport, state: ShadowReport['state'], guardCommand: boolean) => {
    const entries = Object.entries(state);
    return doc.send(new UpdateCommand({
      TableName: table,
      Key: deviceKey(ownerId, report.deviceId),
      UpdateExpression: `SET ${[...entries.map((_, i) => `#f${i} = :v${i}`), 'shadowVersion = :version'].join(', ')} ADD seq :one`,
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(shadowVersion) OR shadowVersion < :version)'
        + (guardCommand ? ' AND (attribute_not_exists(commandSeq) OR commandSeq <= :command)' : ''),
      ...(entries.length > 0 ? { ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name])) } : {}),
      ExpressionAttributeValues: {
        ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])), ':version': report.shadowVersion, ':one': 1,
        ...(guardCommand ? { ':command': report.command } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }));
  };
  return {
    /**
     * Applies a report's members to the owner's device in one conditional UpdateItem, only when its
     * shadow version is higher than any applied before (so a repeated or late report changes
     * nothing) and, when it reports `active` or `sound`, when the device had applied the owner's
     * last command; adding one to `seq` as every device write does. A report made before the owner's
     * latest command has its other members applied by a second UpdateItem (that reordering only).
     */
    async applyReport(ownerId: string, report: ShadowReport): Promise<ReportOutcome> {
      const deviceSide = 'active' in report.state || 'sound' in report.state;
      try {
        await write(ownerId, report, report.state, deviceSide);
        return 'applied';
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const item = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
        if (!item) return 'no-device';
        if (!isNewer(unmarshall(item), report.shadowVersion)) return 'stale';
      }
      const { active: _active, sound: _sound, ...rest } = report.state;
      try {
        await write(ownerId, report, rest, false);
        return 'overridden';
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        return (error as { Item?: unknown }).Item ? 'stale' : 'no-device';
      }
    },
  };
}

/** The DynamoDB actions each method sends (see table-access.ts). */
export const SHADOW_REPO_OPERATIONS = {
  applyReport: { actions: ['UpdateItem'] },
} as const satisfies RepoOperations<ShadowRepo>;
