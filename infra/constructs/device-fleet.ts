import { Stack, Validations } from 'aws-cdk-lib';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnPolicy, CfnProvisioningTemplate } from 'aws-cdk-lib/aws-iot';
import { Construct } from 'constructs';
import type { ServiceFunction } from '#infra/constructs/service-function';
import type { ServiceFunctions } from '#infra/constructs/service-functions';
import { FUNCTIONS, type FunctionName } from '#functions/registry';
import { SERIAL_PARAMETER, THING_NAME_PARAMETER } from '#shared/domain/fleet';

export interface DeviceFleetProps {
  functions: ServiceFunctions;
  /** The IoT policy every device certificate gets (DevicePresence's `DevicePolicy`): its name. */
  devicePolicyName: string;
}

/** The body of the provisioning template: a thing named by the hook, the new certificate made active, the device policy attached. */
export function fleetTemplateBody(devicePolicyName: string) {
  return {
    Parameters: {
      [SERIAL_PARAMETER]: { Type: 'String' },
      [THING_NAME_PARAMETER]: { Type: 'String' },
      'AWS::IoT::Certificate::Id': { Type: 'String' },
    },
    Resources: {
      thing: {
        Type: 'AWS::IoT::Thing',
        Properties: { ThingName: { Ref: THING_NAME_PARAMETER }, AttributePayload: { serial: { Ref: SERIAL_PARAMETER } } },
      },
      certificate: { Type: 'AWS::IoT::Certificate', Properties: { CertificateId: { Ref: 'AWS::IoT::Certificate::Id' }, Status: 'ACTIVE' } },
      policy: { Type: 'AWS::IoT::Policy', Properties: { PolicyName: devicePolicyName } },
    },
  };
}

/**
 * Fleet provisioning by claim, for devices made in bulk: each leaves the factory with a claim
 * certificate its batch shares (made by the maker with IoT Core's CreateKeysAndCertificate, the
 * `FleetClaimPolicy` attached), and at its first start asks IoT Core for a certificate of its own and
 * registers with its serial number:
 * - the provisioning template (`FleetTemplate`): a thing named by the device id the operator listed
 *   the serial with, the new certificate made active, the device policy attached;
 * - its pre-provisioning hook, the function declared with `eventSource: 'iot-provisioning-hook'`
 *   (check-provisioning: a listed serial, once), allowed to be invoked by IoT Core for this template only;
 * - the claim policy: a claim certificate may only ask for a certificate and register with this
 *   template, over the fleet provisioning MQTT API's topics; never a device's topics.
 * IoT Core acts for the template with the provisioning role: AWS's managed role policy for thing
 * registration (service-role/AWSIoTThingsRegistration).
 */
export class DeviceFleet extends Construct {
  readonly fn: FunctionName;
  readonly function: ServiceFunction;
  readonly template: CfnProvisioningTemplate;
  readonly claimPolicy: CfnPolicy;

  constructor(scope: Construct, id: string, props: DeviceFleetProps) {
    super(scope, id);
    const fn = Object.entries(FUNCTIONS).find(([, def]) => def.eventSource === 'iot-provisioning-hook')?.[0];
    if (!fn) throw new Error('no function is declared with eventSource iot-provisioning-hook');
    this.fn = fn;
    // IoT Core waits 5 s for the hook, then refuses the request.
    this.function = props.functions.eventSourceFunction(fn, { timeoutSeconds: 5 });
    const home = this.function.node.scope!;

    const provisioningRole = new Role(home, 'FleetProvisioningRole', {
      assumedBy: new ServicePrincipal('iot.amazonaws.com'),
      description: 'IoT Core registers a fleet-provisioned device with it: the thing, its certificate, the device policy',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSIoTThingsRegistration')],
    });
    Validations.of(provisioningRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSIoTThingsRegistration]',
      reason: 'AWS documents this managed policy as the provisioning role\'s for fleet provisioning; the template it acts for makes only the thing, its certificate and the device policy\'s attachment.',
    });
    this.template = new CfnProvisioningTemplate(home, 'FleetTemplate', {
      description: 'Device and User Service: a device of a listed serial gets its thing, its certificate and the device policy',
      enabled: true,
      provisioningRoleArn: provisioningRole.roleArn,
      templateBody: Stack.of(home).toJsonString(fleetTemplateBody(props.devicePolicyName)),
      preProvisioningHook: { targetArn: this.function.functionArn, payloadVersion: '2020-04-01' },
    });
    const { account, partition, region } = Stack.of(home);
    this.function.addPermission('InvokedByFleetProvisioning', {
      principal: new ServicePrincipal('iot.amazonaws.com'), sourceArn: this.template.attrTemplateArn, sourceAccount: account,
    });

    const iot = `arn:${partition}:iot:${region}:${account}`;
    const apiTopics = ['$aws/certificates/create/json', `$aws/provisioning-templates/${this.template.ref}/provision/json`];
    this.claimPolicy = new CfnPolicy(scope, 'FleetClaimPolicy', {
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: 'iot:Connect', Resource: `${iot}:client/*` },
          { Effect: 'Allow', Action: 'iot:Publish', Resource: apiTopics.map((topic) => `${iot}:topic/${topic}`) },
          { Effect: 'Allow', Action: 'iot:Receive', Resource: apiTopics.map((topic) => `${iot}:topic/${topic}/*`) },
          { Effect: 'Allow', Action: 'iot:Subscribe', Resource: apiTopics.map((topic) => `${iot}:topicfilter/${topic}/*`) },
        ],
      },
    });
  }
}
