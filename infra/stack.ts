import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { Construct } from 'constructs';
import { ApiStage } from '#infra/constructs/api-stage';
import { pascal } from '#infra/constructs/construct-ids';
import { DataTable } from '#infra/constructs/data-table';
import { RouteTableApi } from '#infra/constructs/route-table-api';
import { ServiceFunctions } from '#infra/constructs/service-functions';
import { SigningKey } from '#infra/constructs/signing-key';
import { SCHEDULED_FUNCTIONS } from '#shared/routes';

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

/**
 * The whole service: table, signing key, both HTTP APIs built from the route table (the resource
 * API behind a JWT authorizer that trusts the auth API as issuer), their functions and stages.
 */
export class DeviceUserServiceStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const mailFrom = mailSender(this.node.tryGetContext(MAIL_FROM_CONTEXT));
    const { table } = new DataTable(this, 'Data');
    const signingKey = new SigningKey(this, 'TokenSigning');

    // The APIs, their functions and stages share the scope 'Apis', the functions as its default child
    // (an id CDK leaves out of logical ids): every logical id stays what it was when one construct
    // built them all, so an update replaces no deployed API, route, function or log group.
    const apis = new Construct(this, 'Apis');
    const authApi = new RouteTableApi(apis, 'AuthApi', {
      api: 'auth',
      description: 'Device and User Service: authorization server',
      openRoutesReason: 'The authorization server is public by nature: its endpoints authenticate clients and users themselves.',
    });
    const resourceApi = new RouteTableApi(apis, 'ResourceApi', {
      api: 'resource',
      description: 'Device and User Service: resource API',
      openRoutesReason: 'Every resource route has the JWT authorizer; only the OpenAPI document and the 405/404 fallbacks, which read no data, are open.',
    });
    const functions = new ServiceFunctions(apis, 'Default', {
      table, signingKey, mailFrom, issuer: authApi.apiEndpoint, audience: resourceApi.apiEndpoint,
    });
    const accessToken = new HttpJwtAuthorizer('AccessToken', authApi.apiEndpoint, {
      jwtAudience: [resourceApi.apiEndpoint],
      identitySource: ['$request.header.Authorization'],
    });
    for (const httpApi of [resourceApi, authApi]) {
      httpApi.addRouteTable(functions, accessToken);
      new ApiStage(apis, `${pascal(httpApi.api)}Stage`, { httpApi });
    }
    // The functions without a route: the signing-key rotation (hourly; it acts when a step is due).
    const scheduled = SCHEDULED_FUNCTIONS.map(({ fn }) => ({ fn, function: functions.scheduledFunction(fn) }));

    new CfnOutput(this, 'ApiUrl', { value: resourceApi.apiEndpoint, description: 'Resource API base URL ({base_url})' });
    new CfnOutput(this, 'AuthUrl', { value: authApi.apiEndpoint, description: 'Authorization server base URL ({auth_url})' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'DynamoDB table (for the operator CLI)' });
    new CfnOutput(this, 'SigningKeyId', { value: signingKey.key.keyId, description: 'The first KMS key that signs access tokens (rotations add others)' });
    for (const { fn, function: scheduledFn } of scheduled) {
      new CfnOutput(this, `${pascal(fn)}FunctionName`, { value: scheduledFn.functionName, description: `Function ${fn} (aws lambda invoke)` });
    }
  }
}
