import { Stack, Validations } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/**
 * Acknowledges cdk-nag's wildcard finding (AwsSolutions-IAM5) for each of `resources` on the
 * grantee's role, by its finding id: the ARN as cdk-nag renders it, `<AWS::Region>` for a pseudo
 * parameter in an environment-agnostic stack and the value itself in a stack with an account and region.
 */
export function acknowledgeWildcards(grantee: IGrantable, resources: readonly string[], reason: string): void {
  const role = grantee.grantPrincipal;
  if (!(role instanceof Construct)) return;
  const rendered = (arn: string): string => {
    const resolved = Stack.of(role).resolve(arn) as string | { 'Fn::Join': [string, (string | { Ref: string })[]] };
    if (typeof resolved === 'string') return resolved;
    const [separator, parts] = resolved['Fn::Join'];
    return parts.map((part) => (typeof part === 'string' ? part : `<${part.Ref}>`)).join(separator);
  };
  for (const arn of resources) Validations.of(role).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[Resource::${rendered(arn)}]`, reason });
}
