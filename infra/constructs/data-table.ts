import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, StreamViewType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { BACKUP_RETENTION_DAYS, TABLE_SCHEMA } from '#shared/data/table-schema';

export interface DataTableProps {
  /** Retained, with deletion protection (a stage that keeps its data); else destroyed with the stack. */
  keep: boolean;
}

/**
 * The service's one table: on-demand, TTL, point-in-time recovery, a stream of new and old images
 * (the webhook pipeline's source); deletion protection and retained when kept.
 */
export class DataTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: DataTableProps) {
    super(scope, id);
    const { partitionKey, sortKey, gsi1, ttlAttribute } = TABLE_SCHEMA;
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: partitionKey, type: AttributeType.STRING },
      sortKey: { name: sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: ttlAttribute,
      dynamoStream: StreamViewType.NEW_AND_OLD_IMAGES,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true, recoveryPeriodInDays: BACKUP_RETENTION_DAYS },
      deletionProtection: props.keep,
      removalPolicy: props.keep ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: [{
        indexName: gsi1.name,
        partitionKey: { name: gsi1.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi1.sortKey, type: AttributeType.STRING },
      }],
    });
  }
}
