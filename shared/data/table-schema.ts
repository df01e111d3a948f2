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
