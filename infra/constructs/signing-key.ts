import { Duration, Fn, RemovalPolicy, Stack, Tags, Validations } from 'aws-cdk-lib';
import { AccountRootPrincipal, AnyPrincipal, PolicyDocument, PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { SIGNING_KEY_ROLE_TAG_KEY, SIGNING_KEY_TAG_KEY } from '#shared/keys/kms-keys';
import { ENV } from '#shared/config';

export interface SigningKeyProps {
  /** Retained when the stack goes (a stage that keeps its data); else scheduled for deletion in 7 days. */
  keep: boolean;
}

/** What the rotation function is: a grantee whose environment the grant completes (ServiceFunction). */
export interface RotationFunction extends IGrantable {
  addEnvironment(key: string, value: string): unknown;
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
 * creates the first; the rotation function (shared/keys/rotation.ts) creates the next ones at
 * run time.
 *
 * Who may use a key the rotation creates is fixed by that key's own key policy, which the rotation
 * gives it at CreateKey (the policy is rendered here and handed to the function as
 * SIGNING_KEY_POLICY): kms:Sign for principals of this account tagged
 * `device-user-service:signing-key-role=<deployment>:sign` (the token function's role), the
 * rotation's actions for those tagged `…:rotate` (the rotation function's role), and everything for
 * the account, through IAM, as KMS's default key policy does. Tags on keys grant nothing: KMS
 * authorizes the Tags of CreateKey as kms:TagResource, and "to add tags while creating a KMS key, the
 * principal must have permission in an IAM policy that isn't restricted to particular KMS keys" (AWS
 * KMS Developer Guide, "Controlling access to tags"), so a role allowed to tag its new keys could tag
 * any key in the account, and a permission that follows a tag would follow it there. No role here may
 * tag, and the roles' grants on the stack's own key name its ARN. `<deployment>` is
 * `<stack name>/<unique part of the stack id>`, so a later stack of the same name (after a deletion
 * that kept the keys) gets none of the old keys.
 */
export class SigningKey extends Construct {
  readonly key: Key;
  /** The name of this deployment of the stack, `<stack name>/<unique part of its stack id>` (a token). */
  readonly tagValue: string;
  /** `alias/<stack>-signing`: the rotation points `<prefix>-current` and `<prefix>-next`. */
  readonly aliasPrefix: string;

  constructor(scope: Construct, id: string, props: SigningKeyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.tagValue = `${stack.stackName}/${Fn.select(2, Fn.split('/', stack.stackId))}`;
    this.aliasPrefix = `alias/${stack.stackName}-signing`;
    this.key = new Key(this, 'Key', {
      description: 'Signs the access tokens of the Device and User Service (RS256)',
      keySpec: KeySpec.RSA_2048,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: props.keep ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      ...(props.keep ? {} : { pendingWindow: Duration.days(7) }),
    });
    // Says whose key it is (a retained key outlives its stack); it grants nothing.
    Tags.of(this.key).add(SIGNING_KEY_TAG_KEY, this.tagValue);
    Validations.of(this.key).acknowledge({
      id: 'AwsSolutions-KMS5',
      reason: 'KMS does not rotate asymmetric keys; the rotation function replaces the key (new key and kid, published in the JWKS first).',
    });
  }

  /** kms:Sign, for the one function that issues tokens: on the stack's key by its ARN, on rotated keys by their key policy. */
  grantSign(grantee: IGrantable) {
    this.grantOnOwnKey(grantee, ['kms:Sign']);
    this.tagRole(grantee, 'sign');
  }

  /** kms:GetPublicKey on the stack's key, for the JWKS while no schedule holds its public key (rotated keys' are always held). */
  grantVerify(grantee: IGrantable) {
    this.grantOnOwnKey(grantee, ['kms:GetPublicKey']);
  }

  /**
   * What the rotation function does: CreateKey (no tags; the key policy it passes makes the key
   * usable), read the stack key's public key, point and delete the two aliases, and (by the rotated
   * keys' policy) read their public keys, alias them and schedule their deletion.
   */
  grantRotate(grantee: RotationFunction) {
    const { partition, region, account } = Stack.of(this);
    const aliases = `arn:${partition}:kms:${region}:${account}:${this.aliasPrefix}-*`;
    acknowledgeWildcards(grantee, ['*'], 'CreateKey names no resource; the keys it creates carry the stack\'s key policy and no tags, and this role may tag nothing.');
    acknowledgeWildcards(grantee, [aliases], 'This stack\'s two signing-key aliases, `-current` and `-next`.');
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['kms:CreateKey'], resources: ['*'] }));
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions: ['kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias'],
      resources: [aliases],
    }));
    this.grantOnOwnKey(grantee, ['kms:GetPublicKey', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias']);
    this.tagRole(grantee, 'rotate');
    grantee.addEnvironment(ENV.signingKeyPolicy, Stack.of(this).toJsonString(this.rotatedKeyPolicy().toJSON()));
  }

  /**
   * The key policy of every key the rotation creates: the account (administrators, through IAM, as
   * in KMS's default key policy), kms:Sign for the token function's role, the rotation's actions for
   * the rotation function's role; the roles named by their tag, so that a role CloudFormation replaces
   * keeps its access, and only in this account (kms:CallerAccount).
   */
  rotatedKeyPolicy(): PolicyDocument {
    const { account } = Stack.of(this);
    const forRole = (use: 'sign' | 'rotate') => ({
      StringEquals: { 'kms:CallerAccount': account, [`aws:PrincipalTag/${SIGNING_KEY_ROLE_TAG_KEY}`]: `${this.tagValue}:${use}` },
    });
    return new PolicyDocument({
      statements: [
        new PolicyStatement({ sid: 'AccountAdministration', principals: [new AccountRootPrincipal()], actions: ['kms:*'], resources: ['*'] }),
        new PolicyStatement({ sid: 'TokenSigning', principals: [new AnyPrincipal()], actions: ['kms:Sign'], resources: ['*'], conditions: forRole('sign') }),
        new PolicyStatement({
          sid: 'SigningKeyRotation',
          principals: [new AnyPrincipal()],
          actions: ['kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias'],
          resources: ['*'],
          conditions: forRole('rotate'),
        }),
      ],
    });
  }

  private grantOnOwnKey(grantee: IGrantable, actions: string[]) {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [this.key.keyArn] }));
  }

  /** Tags the grantee's role with its use of the rotated keys (their key policy names roles by this tag). */
  private tagRole(grantee: IGrantable, use: 'sign' | 'rotate') {
    const role = grantee.grantPrincipal;
    if (!(role instanceof Construct)) throw new Error('A signing-key grantee must be a role of this app');
    Tags.of(role).add(SIGNING_KEY_ROLE_TAG_KEY, `${this.tagValue}:${use}`);
  }
}
