import { CustomResource, Duration } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface SigningKeyLifecycleProps {
  /** The rotation function: CloudFormation invokes it for this resource (functions/ops/rotate-signing-key.ts). */
  rotation: IFunction;
  /** On the stack's deletion, delete what rotations created: for a stage that keeps no data. */
  teardown: boolean;
}

/** The CloudFormation type of the resource, as it shows in the console and in events. */
export const SIGNING_KEY_LIFECYCLE_TYPE = 'Custom::SigningKeyLifecycle';

/**
 * The signing keys' part of the deployment and of the stack's deletion: a custom resource whose
 * service token is the rotation function itself (no provider framework: no extra function, role or
 * runtime to keep current). On Create (and Update) the function records the stack's key as active
 * from the deployment, with its public key, and points `…-current` at it: the first rotation is 90
 * days after the deployment, not at the first hourly run. On Delete, for a stage that keeps no data,
 * it closes the schedule and schedules the deletion of every key a rotation created, and deletes the
 * aliases; CloudFormation deletes the stack's own key. A stage that keeps its data keeps them all, as
 * it keeps its table and key.
 *
 * Why not an AWS::KMS::Alias for `…-current`: the rotation moves that alias with UpdateAlias, which
 * CloudFormation would see as drift; a later deployment that changes the alias resource would point it
 * back at the stack's key, and deleting the resource would delete an alias the rotation relies on.
 */
export class SigningKeyLifecycle extends Construct {
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: SigningKeyLifecycleProps) {
    super(scope, id);
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: props.rotation.functionArn,
      resourceType: SIGNING_KEY_LIFECYCLE_TYPE,
      // The function answers within its timeout (10 s); should an answer be lost, the stack waits 5
      // minutes rather than CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      properties: { TeardownOnDelete: props.teardown ? 'true' : 'false' },
    });
  }
}
