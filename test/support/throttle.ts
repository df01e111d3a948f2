import { PutCommand } from '#shared/data/commands';
import type { RepoDeps } from '#shared/data/dynamodb';
import { throttleKey } from '#shared/data/item-keys';
import type { ThrottleScope } from '#shared/data/throttle-repo';

/**
 * Writes a login throttle record as the service leaves it (`failures` reserved, the next attempt
 * allowed at `nextAttemptAt`, epoch ms), for tests that start from a history without waiting through it.
 */
export async function putThrottleRecord(
  { doc, table }: RepoDeps, scope: ThrottleScope, subject: string, record: { failures: number; nextAttemptAt: number; expiresAt?: number },
): Promise<void> {
  const expiresAt = record.expiresAt ?? Math.floor(record.nextAttemptAt / 1000) + 86_400;
  await doc.send(new PutCommand({ TableName: table, Item: { ...throttleKey(scope, subject), failures: record.failures, nextAttemptAt: record.nextAttemptAt, expiresAt } }));
}
