import { CfnOutput, Stack, type App, type StackProps } from 'aws-cdk-lib';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { Construct } from 'constructs';
import { ApiStage } from '#infra/constructs/api-stage';
import { pascal } from '#infra/constructs/construct-ids';
import { CustomDomains } from '#infra/constructs/custom-domains';
import { DataTable } from '#infra/constructs/data-table';
import { FunctionAreas } from '#infra/constructs/function-areas';
import { RouteTableApi } from '#infra/constructs/route-table-api';
import { ServiceFunctions } from '#infra/constructs/service-functions';
import { SigningKey } from '#infra/constructs/signing-key';
import { SigningKeyLifecycle } from '#infra/constructs/signing-key-lifecycle';
import { AccountMail } from '#infra/constructs/account-mail';
import { Monitoring } from '#infra/constructs/monitoring';
import { Webhooks } from '#infra/constructs/webhooks';
import { DevicePresence, PRESENCE_FAILURES_DESCRIPTION } from '#infra/constructs/device-presence';
import { FleetProvisioning } from '#infra/constructs/fleet-provisioning';
import { DeviceShadow, SHADOW_FAILURES_DESCRIPTION } from '#infra/constructs/device-shadow';
import {
  ALARM_EMAIL_CONTEXT, alarmEmail, customDomainSettings, EMAIL_ADDRESS, serviceStage, StackConfigurationError, STAGE_CONTEXT,
  TRACING_CONTEXT, tracingEnabled,
} from '#infra/settings';

export { StackConfigurationError } from '#infra/settings';
import { SCHEDULED_FUNCTIONS } from '#functions/registry';

/** The CDK context value naming the sender of account e-mail: `cdk deploy -c mailFrom=<address>`. */
export const MAIL_FROM_CONTEXT = 'mailFrom';


/**
 * The sender of account e-mail, from the context value `mailFrom`. There is no default: a deployed
 * stack must not send as a placeholder, so a missing or malformed value stops synthesis.
 */
export function mailSender(value: unknown): string {
  // A plain address (no display name): the stack grants ses:SendEmail on it and on its domain.
  const example = `npx cdk deploy -c ${MAIL_FROM_CONTEXT}=no-reply@your-domain.example`;
  if (value === undefined || value === null || value === '') {
    throw new StackConfigurationError(`The CDK context value '${MAIL_FROM_CONTEXT}' is required: the sender of account e-mail, an address verified `
      + `in Amazon SES or an address at a domain verified there. Pass it on the command line: ${example}`);
  }
  if (typeof value !== 'string' || !EMAIL_ADDRESS.test(value)) {
    throw new StackConfigurationError(`The CDK context value '${MAIL_FROM_CONTEXT}' must be a plain e-mail address (name@domain, no display name), `
      + `verified in Amazon SES or at a domain verified there; got ${JSON.stringify(value)}. For example: ${example}`);
  }
  return value;
}

/**
 * The service's stack for the stage named by the context value `stage`: `DeviceUserService-<stage>`,
 * or `DeviceUserService` (the stack deployed before stages existed) without one.
 */
export function createServiceStack(app: App, props?: StackProps): DeviceUserServiceStack {
  return new DeviceUserServiceStack(app, serviceStage(app.node.tryGetContext(STAGE_CONTEXT)).stackName, props);
}

/**
 * The whole service: table, signing key, both HTTP APIs built from the route table (the resource
 * API behind a JWT authorizer that trusts the auth API as issuer), their functions and stages, and
 * optionally the APIs' custom domains (context values in `infra/settings.ts`). A stage that keeps
 * its data (see `serviceStage`) retains the table and the key, and protects the table and the stack
 * against deletion; a `dev…` stage can be destroyed whole.
 */
export class DeviceUserServiceStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    const stage = serviceStage(scope.node.tryGetContext(STAGE_CONTEXT));
    super(scope, id, {
      terminationProtection: stage.keepsData,
      ...(stage.name ? { tags: { Stage: stage.name } } : {}),
      ...props,
    });
    const mailFrom = mailSender(this.node.tryGetContext(MAIL_FROM_CONTEXT));
    const alarmSubscriber = alarmEmail(this.node.tryGetContext(ALARM_EMAIL_CONTEXT));
    const tracing = tracingEnabled(this.node.tryGetContext(TRACING_CONTEXT));
    const domains = customDomainSettings((name) => this.node.tryGetContext(name), this.region);
    const { table } = new DataTable(this, 'Data', { keep: stage.keepsData });
    const signingKey = new SigningKey(this, 'TokenSigning', { keep: stage.keepsData });
    const mail = new AccountMail(this, 'AccountMail');
    const metricsNamespace = `DeviceUserService/${this.stackName}`;

    // The APIs, their functions and stages share the scope 'Apis', the functions as its default child
    // (an id CDK leaves out of logical ids): every logical id stays what it was when one construct
    // built them all, so an update replaces no deployed API, route, function or log group.
    const apis = new Construct(this, 'Apis');
    const apiName = (api: string) => (stage.name ? `${this.stackName}-${api}` : undefined);
    const authApi = new RouteTableApi(apis, 'AuthApi', {
      api: 'auth',
      apiName: apiName('auth'),
      description: 'Device and User Service: authorization server',
      openRoutesReason: 'The authorization server is public by nature: its endpoints authenticate clients and users themselves.',
    });
    const resourceApi = new RouteTableApi(apis, 'ResourceApi', {
      api: 'resource',
      apiName: apiName('resource'),
      description: 'Device and User Service: resource API',
      openRoutesReason: 'Every resource route has the JWT authorizer; only the OpenAPI document and the 405/404 fallbacks, which read no data, are open.',
    });
    // The issuer and the audience are the custom domains' URLs when there are any, else the
    // execute-api URLs (which change if an API is ever recreated: see the README's deploy section).
    const customDomains = domains && new CustomDomains(this, 'CustomDomains', domains);
    const issuer = customDomains?.authUrl ?? authApi.apiEndpoint;
    const audience = customDomains?.apiUrl ?? resourceApi.apiEndpoint;
    // The functions live in nested stacks by area (function-areas.ts says what stays here and why).
    const areas = new FunctionAreas(this, 'Areas');
    const functions = new ServiceFunctions(apis, 'Default', { areas, table, signingKey, mailFrom, mail, metricsNamespace, tracing, issuer, audience });
    const accessToken = new HttpJwtAuthorizer('AccessToken', issuer, {
      jwtAudience: [audience],
      identitySource: ['$request.header.Authorization'],
    });
    for (const httpApi of [resourceApi, authApi]) {
      httpApi.addRouteTable(functions, accessToken);
      const apiStage = new ApiStage(apis, `${pascal(httpApi.api)}Stage`, { httpApi });
      customDomains?.map(httpApi.api, httpApi, apiStage);
    }
    // The functions without a route: the signing-key rotation (hourly; it acts when a step is due).
    const scheduled = SCHEDULED_FUNCTIONS.map(({ fn }) => ({ fn, ...functions.scheduledFunction(fn) }));
    // The signing keys' deployment and deletion steps (infra/constructs/signing-key-lifecycle.ts). Its
    // id is not the earlier `TokenSigningLifecycle`: that resource's ServiceToken was the function's
    // ARN, which CloudFormation will not change, so this version replaces the resource (its Delete,
    // during the update's clean-up, tears nothing down: the stack is not being deleted).
    new SigningKeyLifecycle(this, 'SigningKeyLifecycle', {
      rotation: scheduled.find(({ fn }) => fn === 'rotate-signing-key')!.function, rotatedKeyPolicy: signingKey.rotatedKeyPolicyJson, teardown: !stage.keepsData,
    });
    // The webhook pipeline: the table's stream, the fan-out, the delivery queue and its dead letters.
    const webhooks = new Webhooks(this, 'Webhooks', { table, functions });
    functions.bindWebhookQueue(webhooks.queue);
    // Devices on IoT Core: their policy, and their presence from the broker's lifecycle events.
    const presence = new DevicePresence(this, 'DevicePresence', { functions });
    // Devices provisioned by claim at the factory: the template, its pre-provisioning hook, the claim policy.
    const fleet = new FleetProvisioning(this, 'FleetProvisioning', { functions, devicePolicy: presence.devicePolicy });
    // And their shadows: owners' commands to the devices, the devices' reports to the table.
    const shadow = new DeviceShadow(this, 'DeviceShadow', { table, functions });
    const monitoring = new Monitoring(this, 'Monitoring', {
      apis: [authApi, resourceApi], functions: functions.all(), table, mail, metricsNamespace, alarmEmail: alarmSubscriber,
      webhookDeadLetters: webhooks.deadLetters, webhookStreamFailures: webhooks.streamFailures,
      scheduledFailures: [
        ...scheduled.map(({ fn, failures }) => ({ fn, queue: failures })),
        { fn: presence.fn, queue: presence.failures, description: PRESENCE_FAILURES_DESCRIPTION },
        { fn: 'device-shadow', queue: shadow.failures, description: SHADOW_FAILURES_DESCRIPTION },
      ],
    });

    new CfnOutput(this, 'ApiUrl', { value: audience, description: 'Resource API base URL ({base_url})' });
    new CfnOutput(this, 'AuthUrl', { value: issuer, description: 'Authorization server base URL ({auth_url})' });
    new CfnOutput(this, 'TableName', { value: table.tableName, description: 'DynamoDB table (for the operator CLI)' });
    new CfnOutput(this, 'StreamFailuresQueueUrl', {
      value: webhooks.streamFailures.queueUrl, description: 'The webhook fan-out\'s failed stream batches (npm run admin -- replay-stream-failures)',
    });
    new CfnOutput(this, 'WebhookQueueUrl', { value: webhooks.queue.queueUrl, description: 'The webhook delivery queue (a replay of stream failures sends to it)' });
    new CfnOutput(this, 'AlarmTopicArn', { value: monitoring.topic.topicArn, description: 'SNS topic every alarm notifies (subscribe to it)' });
    new CfnOutput(this, 'DashboardName', { value: monitoring.dashboard.dashboardName, description: 'CloudWatch dashboard of the service' });
    new CfnOutput(this, 'DevicePolicyName', { value: presence.devicePolicy.ref, description: 'The IoT policy to attach to every device certificate' });
    new CfnOutput(this, 'ProvisioningTemplateName', { value: fleet.templateName, description: 'Fleet provisioning by claim: the template devices register with' });
    new CfnOutput(this, 'ClaimPolicyName', { value: fleet.claimPolicy.ref, description: 'The IoT policy of the factory\'s claim certificates' });
    new CfnOutput(this, 'SigningKeyId', { value: signingKey.key.keyId, description: 'The first KMS key that signs access tokens (rotations add others)' });
    for (const { fn, function: scheduledFn } of scheduled) {
      new CfnOutput(this, `${pascal(fn)}FunctionName`, { value: scheduledFn.functionName, description: `Function ${fn} (aws lambda invoke)` });
    }
  }
}
