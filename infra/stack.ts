import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DataTable } from '#infra/constructs/data-table';
import { ServiceApis } from '#infra/constructs/service-apis';
import { SigningKey } from '#infra/constructs/signing-key';

/** The whole service: table, signing key, and both HTTP APIs with their functions. */
export class DeviceUserServiceStack extends Stack {
  readonly apis: ServiceApis;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const { table } = new DataTable(this, 'Data');
    const signingKey = new SigningKey(this, 'TokenSigning');
    // `cdk deploy -c mailFrom=no-reply@your-domain` names the SES-verified sender of account e-mail.
    const mailFrom = String(this.node.tryGetContext('mailFrom') ?? 'no-reply@example.com');
    this.apis = new ServiceApis(this, 'Apis', { table, signingKey, mailFrom });

    new CfnOutput(this, 'ApiUrl', { value: this.apis.resourceApi.apiEndpoint, description: 'Resource API base URL ({base_url})' });
    new CfnOutput(this, 'AuthUrl', { value: this.apis.authApi.apiEndpoint, description: 'Authorization server base URL ({auth_url})' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'DynamoDB table (for the operator CLI)' });
    new CfnOutput(this, 'SigningKeyId', { value: signingKey.key.keyId, description: 'KMS key that signs access tokens' });
  }
}
