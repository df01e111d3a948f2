import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { awsClientConfig, observeClient } from '#shared/aws/client-config';

/** The status CloudFormation gives a stack while it deletes it (and only then). */
export const STACK_BEING_DELETED = 'DELETE_IN_PROGRESS';

/** Reads a stack's current status (`CREATE_COMPLETE`, `UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS`, `DELETE_IN_PROGRESS`, …). */
export type StackStatusReader = () => Promise<string>;

/** The part of the CloudFormation client the reader uses (a test double stands in for it). */
export interface CloudFormationSend {
  send(command: DescribeStacksCommand): Promise<{ Stacks?: { StackStatus?: string }[] }>;
}

/**
 * The status of the stack `stackId` (its full ARN, so that a deleted stack or a later one of the
 * same name is never read instead), by cloudformation:DescribeStacks. CloudFormation sends a custom
 * resource `Delete` when the stack is deleted, when the resource leaves the template or is replaced,
 * and when an update that created it rolls back; only the stack's own status tells them apart.
 * Throws when CloudFormation does not answer or knows no such stack: the caller must then assume
 * the stack lives.
 */
export function createStackStatusReader(
  stackId: string,
  cloudFormation: CloudFormationSend = observeClient(new CloudFormationClient(awsClientConfig())),
): StackStatusReader {
  return async () => {
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackId }));
    const status = Stacks?.[0]?.StackStatus;
    if (!status) throw new Error(`CloudFormation gave no status for stack ${stackId}`);
    return status;
  };
}
