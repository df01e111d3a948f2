/**
 * The one table's shape. The CDK construct and the local/test table creation both read it,
 * so DynamoDB Local always has exactly the table AWS has.
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
} as const;

/**
 * How long point-in-time recovery keeps the table's past states, in days (DynamoDB's longest, and
 * its default): the stack sets it, and the account deletion's page, e-mail and docs say it, since a
 * deleted account's data stays in the backups that long.
 */
export const BACKUP_RETENTION_DAYS = 35;
