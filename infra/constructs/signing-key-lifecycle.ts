import { Aws, CustomResource, Duration, Fn, Validations } from 'aws-cdk-lib';
import { CfnPermission, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Subscription, SubscriptionProtocol, Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface SigningKeyLifecycleProps {
  /** The rotation function: subscribed to the lifecycle topic, it answers for this resource (functions/ops/rotate-signing-key.ts). */
  rotation: IFunction;
  /** The rotated keys' key policy (SigningKey.rotatedKeyPolicyJson): a change, such as a role replaced, makes an Update that re-applies it. */
  rotatedKeyPolicy: string;
  /** On the stack's deletion, delete what rotations created: for a stage that keeps no data. */
  teardown: boolean;
}

/** The CloudFormation type of the resource, as it shows in the console and in events. */
export const SIGNING_KEY_LIFECYCLE_TYPE = 'Custom::SigningKeyLifecycle';
/** The lifecycle topic's name after the stack's: `<stack name>-signing-key-lifecycle` (SNS allows 256 characters; a stack name has at most 128). */
export const LIFECYCLE_TOPIC_SUFFIX = '-signing-key-lifecycle';

/**
 * The signing keys' part of the deployment and of the stack's deletion: a custom resource whose
 * service token is an SNS topic of this stack with a name fixed by the stack's name, built from
 * pseudo parameters alone, to which the rotation function is subscribed. CloudFormation refuses to
 * change a custom resource's ServiceToken ("Modifying service token is not allowed"), so the token
 * must not be anything a refactoring changes: not the function's ARN, whose name is generated and
 * changes when the function moves to another area or is renamed. The topic stays here, with the
 * resource; the function may move, and its subscription moves with it.
 *
 * On Create and Update the function records the stack's key as active from the deployment, with its
 * public key, points `…-current` at it (the first rotation is 90 days after the deployment, not at
 * the first hourly run), and gives every rotated key the current key policy (a property here, so that
 * a role's replacement is an Update). On Delete, for a stage that keeps no data, and only when the
 * stack itself is being deleted (not on a rollback, nor when the resource is replaced or leaves the
 * template), it closes the schedule, schedules the deletion of every key a rotation created, and
 * deletes the aliases; CloudFormation deletes the stack's own key.
 *
 * Why not an AWS::KMS::Alias for `…-current`: the rotation moves that alias with UpdateAlias, which
 * CloudFormation would see as drift; a later deployment that changes the alias resource would point it
 * back at the stack's key, and deleting the resource would delete an alias the rotation relies on.
 */
export class SigningKeyLifecycle extends Construct {
  readonly resource: CustomResource;
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: SigningKeyLifecycleProps) {
    super(scope, id);
    const topicName = Fn.join('', [Aws.STACK_NAME, LIFECYCLE_TOPIC_SUFFIX]);
    this.topic = new Topic(this, 'Topic', { topicName, displayName: 'Device and User Service: signing-key lifecycle', enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason: 'It carries CloudFormation\'s requests for the lifecycle resource: the rotated keys\' key policy (role ARNs, no secret) and '
        + 'a response URL good for that one request; CloudFormation publishes as the deploying identity, which a customer managed key would '
        + 'have to trust too.',
    });
    // Here, beside the topic, not in the function's nested stack (which may not depend on this one):
    // when the function moves, CloudFormation replaces these two, and the token stays.
    const subscription = new Subscription(this, 'Subscription', { topic: this.topic, protocol: SubscriptionProtocol.LAMBDA, endpoint: props.rotation.functionArn });
    Validations.of(subscription).acknowledge({
      id: 'CloudFormation-Validate::W3694',
      reason: 'The endpoint is the rotation function\'s ARN, an output of its nested stack; the check sees the nested stack, not the function.',
    });
    const permission = new CfnPermission(this, 'TopicInvoke', {
      action: 'lambda:InvokeFunction', functionName: props.rotation.functionArn, principal: 'sns.amazonaws.com', sourceArn: this.topic.topicArn,
    });
    const serviceToken = Fn.join(':', ['arn', Aws.PARTITION, 'sns', Aws.REGION, Aws.ACCOUNT_ID, topicName]);
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken,
      resourceType: SIGNING_KEY_LIFECYCLE_TYPE,
      // The function answers within its timeout (10 s); should an answer be lost, the stack waits 5
      // minutes rather than CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      properties: { TeardownOnDelete: props.teardown ? 'true' : 'false', RotatedKeyPolicy: props.rotatedKeyPolicy },
    });
    // The token names the topic by its name only: the topic, its subscriber and the subscriber's
    // permission must exist before CloudFormation publishes.
    this.resource.node.addDependency(this.topic, subscription, permission);
  }
}
