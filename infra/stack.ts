import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DataTable } from '#infra/constructs/data-table';
import { ServiceApis } from '#infra/constructs/service-apis';
import { SigningKey } from '#infra/constructs/signing-key';

/** The CDK context value naming the sender of account e-mail: `cdk deploy -c mailFrom=<address>`. */
export const MAIL_FROM_CONTEXT = 'mailFrom';

// A plain address (no display name): the stack grants ses:SendEmail on it and on its domain.
const ADDRESS = /^(?!\.)(?!.*\.\.)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}(?<!\.)@(?=.{4,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** A missing or malformed deployment setting: the app prints its message alone and stops. */
export class StackConfigurationError extends Error {
  override name = 'StackConfigurationError';
}

/**
 * The sender of account e-mail, from the context value `mailFrom`. There is no default: a deployed
 * stack must not send as a placeholder, so a missing or malformed value stops synthesis.
 */
export function mailSender(value: unknown): string {
  const example = `npx cdk deploy -c ${MAIL_FROM_CONTEXT}=no-reply@your-domain.example`;
  if (value === undefined || value === null || value === '') {
    throw new StackConfigurationError(`The CDK context value '${MAIL_FROM_CONTEXT}' is required: the sender of account e-mail, an address verified `
      + `in Amazon SES or an address at a domain verified there. Pass it on the command line: ${example}`);
  }
  if (typeof value !== 'string' || !ADDRESS.test(value)) {
    throw new StackConfigurationError(`The CDK context value '${MAIL_FROM_CONTEXT}' must be a plain e-mail address (name@domain, no display name), `
      + `verified in Amazon SES or at a domain verified there; got ${JSON.stringify(value)}. For example: ${example}`);
  }
  return value;
}

/** The whole service: table, signing key, and both HTTP APIs with their functions. */
export class DeviceUserServiceStack extends Stack {
  readonly apis: ServiceApis;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const mailFrom = mailSender(this.node.tryGetContext(MAIL_FROM_CONTEXT));
    const { table } = new DataTable(this, 'Data');
    const signingKey = new SigningKey(this, 'TokenSigning');
    this.apis = new ServiceApis(this, 'Apis', { table, signingKey, mailFrom });

    new CfnOutput(this, 'ApiUrl', { value: this.apis.resourceApi.apiEndpoint, description: 'Resource API base URL ({base_url})' });
    new CfnOutput(this, 'AuthUrl', { value: this.apis.authApi.apiEndpoint, description: 'Authorization server base URL ({auth_url})' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'DynamoDB table (for the operator CLI)' });
    new CfnOutput(this, 'SigningKeyId', { value: signingKey.key.keyId, description: 'KMS key that signs access tokens' });
  }
}
