import { Names, Stack, Validations } from 'aws-cdk-lib';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnPolicy, CfnProvisioningTemplate } from 'aws-cdk-lib/aws-iot';
import { Construct } from 'constructs';
import { allowIotInvoke, iotEventSourceFunction } from '#infra/constructs/iot-rule-function';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { SERIAL_PARAMETER, THING_NAME_PARAMETER } from '#shared/devices/fleet-provisioning';

export interface FleetProvisioningProps {
  functions: ServiceFunctions;
  /** The device policy every device certificate gets (DevicePresence's). */
  devicePolicy: CfnPolicy;
}

/**
 * Fleet provisioning by claim, beside the device functions (their nested stack): devices leave the
 * factory with a claim certificate (made by the operator with `aws iot create-keys-and-certificate`,
 * the claim policy attached) and their serial number. At first connection a device asks IoT Core for
 * its own certificate (`$aws/certificates/create/json`) and registers with this template
 * (`$aws/provisioning-templates/<name>/provision/json`, parameter `SerialNumber`); IoT Core asks the
 * pre-provisioning hook (`eventSource: 'iot-provisioning-hook'`, pre-provision-device), which allows
 * a serial of the allow-list once and names the thing as the serial's device; then the template makes
 * the thing, activates the certificate and attaches the device policy. Certificates come from IoT
 * Core's own CA.
 */
export class FleetProvisioning extends Construct {
  readonly function: ServiceFunction;
  readonly template: CfnProvisioningTemplate;
  readonly claimPolicy: CfnPolicy;
  readonly templateName: string;

  constructor(scope: Construct, id: string, props: FleetProvisioningProps) {
    super(scope, id);
    this.function = iotEventSourceFunction(props.functions, 'iot-provisioning-hook').function;
    const home = this.function.node.scope!;
    const { account, partition, region } = Stack.of(home);
    // A name of its own, known before the template exists: the hook's invoke permission names it, and must exist first.
    this.templateName = Names.uniqueResourceName(this, { maxLength: 36, separator: '-' });
    const templateArn = `arn:${partition}:iot:${region}:${account}:provisioningtemplate/${this.templateName}`;
    allowIotInvoke(this.function, 'InvokedByProvisioningTemplate', templateArn);

    const role = new Role(home, 'ProvisioningRole', {
      assumedBy: new ServicePrincipal('iot.amazonaws.com'),
      description: 'Fleet provisioning: makes the thing, activates its certificate and attaches the device policy',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSIoTThingsRegistration')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4',
      reason: 'AWSIoTThingsRegistration is the role policy AWS documents for provisioning templates; IoT Core assumes it for registrations the hook allowed.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSIoTThingsRegistration]',
      reason: 'AWSIoTThingsRegistration is the role policy AWS documents for provisioning templates; IoT Core assumes it for registrations the hook allowed.',
    });

    this.template = new CfnProvisioningTemplate(home, 'ProvisioningTemplate', {
      templateName: this.templateName,
      description: 'Devices provisioned by claim: a serial of the allow-list becomes its device (the hook names the thing)',
      enabled: true,
      provisioningRoleArn: role.roleArn,
      preProvisioningHook: { targetArn: this.function.functionArn, payloadVersion: '2020-04-01' },
      templateBody: Stack.of(home).toJsonString({
        Parameters: {
          [THING_NAME_PARAMETER]: { Type: 'String' },
          [SERIAL_PARAMETER]: { Type: 'String' },
          'AWS::IoT::Certificate::Id': { Type: 'String' },
        },
        Resources: {
          thing: {
            Type: 'AWS::IoT::Thing',
            Properties: { ThingName: { Ref: THING_NAME_PARAMETER }, AttributePayload: { serial: { Ref: SERIAL_PARAMETER } } },
            OverrideSettings: { AttributePayload: 'REPLACE' },
          },
          certificate: { Type: 'AWS::IoT::Certificate', Properties: { CertificateId: { Ref: 'AWS::IoT::Certificate::Id' }, Status: 'ACTIVE' } },
          policy: { Type: 'AWS::IoT::Policy', Properties: { PolicyName: props.devicePolicy.ref } },
        },
      }),
    });
    this.template.node.addDependency(this.function.node.findChild('InvokedByProvisioningTemplate'));

    // What the factory's claim certificate may do: get a certificate of the device's own, and register with this template.
    const iot = `arn:${partition}:iot:${region}:${account}`;
    const topics = ['$aws/certificates/create/json', `$aws/provisioning-templates/${this.templateName}/provision/json`];
    this.claimPolicy = new CfnPolicy(home, 'ClaimPolicy', {
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: 'iot:Connect', Resource: `${iot}:client/*` },
          { Effect: 'Allow', Action: 'iot:Publish', Resource: topics.map((topic) => `${iot}:topic/${topic}`) },
          { Effect: 'Allow', Action: 'iot:Receive', Resource: topics.map((topic) => `${iot}:topic/${topic}/*`) },
          { Effect: 'Allow', Action: 'iot:Subscribe', Resource: topics.map((topic) => `${iot}:topicfilter/${topic}/*`) },
        ],
      },
    });
  }
}
