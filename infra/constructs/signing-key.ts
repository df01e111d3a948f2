import { Duration, RemovalPolicy, Stack, Tags, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { SIGNING_KEY_TAG_KEY } from '#shared/auth/kms-keys';

export interface SigningKeyProps {
  /** Retained when the stack goes (a stage that keeps its data); else scheduled for deletion in 7 days. */
  keep: boolean;
}


/**
 * The wildcard resources of these grants are bounded by conditions (cdk-nag AwsSolutions-IAM5), each
 * acknowledged by its finding id: the ARN as cdk-nag renders it (`<AWS::Region>` for a pseudo parameter).
 */
function acknowledgeWildcards(grantee: IGrantable, resources: string[], reason: string) {
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

/**
 * The access-token signing keys: RSA_2048 in KMS, the private half never leaves KMS. The stack
 * creates the first; the rotation function (shared/auth/signing-keys.ts) creates the next ones at
 * run time. All carry the tag `device-user-service:signing-key=<stack name>`, and the functions are
 * granted their actions on keys with that tag (attribute-based), so a rotated key needs no redeploy.
 */
export class SigningKey extends Construct {
  readonly key: Key;
  /** The tag's value on this stack's signing keys. */
  readonly tagValue: string;
  /** `alias/<stack>-signing`: the rotation points `<prefix>-current` and `<prefix>-next`. */
  readonly aliasPrefix: string;

  constructor(scope: Construct, id: string, props: SigningKeyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.tagValue = stack.stackName;
    this.aliasPrefix = `alias/${stack.stackName}-signing`;
    this.key = new Key(this, 'Key', {
      description: 'Signs the access tokens of the Device and User Service (RS256)',
      keySpec: KeySpec.RSA_2048,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: props.keep ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      ...(props.keep ? {} : { pendingWindow: Duration.days(7) }),
    });
    Tags.of(this.key).add(SIGNING_KEY_TAG_KEY, this.tagValue);
    Validations.of(this.key).acknowledge({
      id: 'AwsSolutions-KMS5',
      reason: 'KMS does not rotate asymmetric keys; the rotation function replaces the key (new key and kid, published in the JWKS first).',
    });
  }

  /** kms:Sign, for the one function that issues tokens. */
  grantSign(grantee: IGrantable) {
    this.grantOnTaggedKeys(grantee, ['kms:Sign']);
  }

  /** kms:GetPublicKey, for the JWKS. */
  grantVerify(grantee: IGrantable) {
    this.grantOnTaggedKeys(grantee, ['kms:GetPublicKey']);
  }

  /**
   * What the rotation function does: CreateKey (with the tag, which needs kms:TagResource too),
   * point the two aliases, and ScheduleKeyDeletion of a retired key.
   */
  grantRotate(grantee: IGrantable) {
    const { partition, region, account } = Stack.of(this);
    const aliases = `arn:${partition}:kms:${region}:${account}:${this.aliasPrefix}-*`;
    acknowledgeWildcards(grantee, ['*'], 'CreateKey names no resource: it is limited by its request tag, so it creates only keys tagged as this stack\'s signing keys.');
    acknowledgeWildcards(grantee, [aliases], 'This stack\'s two signing-key aliases, `-current` and `-next`.');
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions: ['kms:CreateKey', 'kms:TagResource'],
      resources: ['*'],
      conditions: {
        StringEquals: { [`aws:RequestTag/${SIGNING_KEY_TAG_KEY}`]: this.tagValue },
        'ForAllValues:StringEquals': { 'aws:TagKeys': [SIGNING_KEY_TAG_KEY] },
      },
    }));
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions: ['kms:CreateAlias', 'kms:UpdateAlias'],
      resources: [aliases],
    }));
    this.grantOnTaggedKeys(grantee, ['kms:CreateAlias', 'kms:UpdateAlias', 'kms:ScheduleKeyDeletion']);
  }

  private grantOnTaggedKeys(grantee: IGrantable, actions: string[]) {
    const { partition, region, account } = Stack.of(this);
    const keys = `arn:${partition}:kms:${region}:${account}:key/*`;
    acknowledgeWildcards(grantee, [keys], 'Limited by the resource tag to this stack\'s signing keys: rotations create them at run time, so their ids are not known at deploy time.');
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions,
      resources: [keys],
      conditions: { StringEquals: { [`aws:ResourceTag/${SIGNING_KEY_TAG_KEY}`]: this.tagValue } },
    }));
  }
}
