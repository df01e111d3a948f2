import { Duration, Fn, Lazy, RemovalPolicy, Stack, Tags, Validations } from 'aws-cdk-lib';
import { AccountRootPrincipal, ArnPrincipal, PolicyDocument, PolicyStatement, type IGrantable, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { acknowledgeWildcards } from '#infra/constructs/nag-wildcards';
import { SIGNING_KEY_TAG_KEY } from '#shared/keys/kms-keys';
import { ENV } from '#shared/config';

export interface SigningKeyProps {
  /** Retained when the stack goes (a stage that keeps its data); else scheduled for deletion in 7 days. */
  keep: boolean;
}

/**
 * The tag earlier versions gave the token function's role (`<deployment>:sign`) and the rotation's
 * (`<deployment>:rotate`), which the keys their rotations created trusted in their key policy. It
 * grants nothing under the policy this version gives rotated keys (the roles by ARN). The two roles
 * keep it for this version only, so that while an upgrade runs (the roles updated, then the
 * lifecycle's Create putting the new policy on those keys) the keys still let them sign and rotate;
 * remove it in the next version.
 */
export const UPGRADE_ROLE_TAG_KEY = 'device-user-service:signing-key-role';

/** What the rotation function is: a grantee whose environment the grant completes (ServiceFunction). */
export interface RotationFunction extends IGrantable {
  addEnvironment(key: string, value: string): unknown;
}

// The wildcard resources of these grants are bounded by conditions (cdk-nag AwsSolutions-IAM5): acknowledgeWildcards.

/**
 * The access-token signing keys: RSA_2048 in KMS, the private half never leaves KMS. The stack
 * creates the first; the rotation function (shared/keys/rotation.ts) creates the next ones at
 * run time.
 *
 * Who may use a key the rotation creates is fixed by that key's own key policy, rendered here and
 * handed to the function as SIGNING_KEY_POLICY: kms:Sign for the token function's role and the
 * rotation's actions for the rotation function's role, each named by its ARN, and everything for the
 * account, through IAM, as KMS's default key policy does. No tag, alias or session tag counts: a
 * principal's tags are whatever anyone allowed iam:TagRole, iam:TagUser or sts:TagSession gives it,
 * so a policy that trusted a tag would trust them. A role's ARN changes when CloudFormation replaces
 * it (and KMS turns the ARN of a deleted role into an id no new role matches), so the policy is also
 * a property of the lifecycle resource: its change makes CloudFormation send an Update, on which the
 * function puts the new policy on every rotated key it holds (kms:PutKeyPolicy, granted to the
 * rotation role through IAM below, so that a replaced rotation role can still do it). Tags on keys
 * grant nothing either: KMS authorizes the Tags of CreateKey as kms:TagResource, and "to add tags
 * while creating a KMS key, the principal must have permission in an IAM policy that isn't restricted
 * to particular KMS keys" (AWS KMS Developer Guide, "Controlling access to tags"); no role here may tag.
 */
export class SigningKey extends Construct {
  readonly key: Key;
  /** The name of this deployment of the stack, `<stack name>/<unique part of its stack id>` (a token). */
  readonly tagValue: string;
  /** `alias/<stack>-signing`: the rotation points `<prefix>-current` and `<prefix>-next`. */
  readonly aliasPrefix: string;
  /** The roles the rotated keys' policy names: the token function's (grantSign) and the rotation's (grantRotate). */
  private readonly roles: { sign?: IRole; rotate?: IRole } = {};
  /** The rotated keys' key policy (JSON), rendered once both roles are known: the function's SIGNING_KEY_POLICY and the lifecycle's property. */
  readonly rotatedKeyPolicyJson: string;

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
    this.rotatedKeyPolicyJson = Lazy.string({ produce: () => stack.toJsonString(this.rotatedKeyPolicy().toJSON()) });
  }

  /** kms:Sign, for the one function that issues tokens: on the stack's key by its ARN, on rotated keys by their key policy (its role's ARN). */
  grantSign(grantee: IGrantable) {
    this.grantOnOwnKey(grantee, ['kms:Sign']);
    this.roles.sign = this.roleOf(grantee, 'sign');
  }

  /** kms:GetPublicKey on the stack's key, for the JWKS while no schedule holds its public key (rotated keys' are always held). */
  grantVerify(grantee: IGrantable) {
    this.grantOnOwnKey(grantee, ['kms:GetPublicKey']);
  }

  /**
   * What the rotation function does: CreateKey (no tags; the key policy it passes makes the key
   * usable), read the stack key's public key, point and delete the two aliases, (by the rotated keys'
   * policy) read their public keys, alias them and schedule their deletion, put that policy again on
   * the rotated keys (kms:PutKeyPolicy, through IAM), and read its own stack's status (DescribeStacks).
   */
  grantRotate(grantee: RotationFunction) {
    const stack = Stack.of(this);
    const { partition, region, account } = stack;
    const aliases = `arn:${partition}:kms:${region}:${account}:${this.aliasPrefix}-*`;
    const keys = `arn:${partition}:kms:${region}:${account}:key/*`;
    acknowledgeWildcards(grantee, ['*'], 'CreateKey names no resource; the keys it creates carry the stack\'s key policy and no tags, and this role may tag nothing.');
    acknowledgeWildcards(grantee, [aliases], 'This stack\'s two signing-key aliases, `-current` and `-next`.');
    acknowledgeWildcards(grantee, [keys], 'The rotated keys are created at run time, so no ARN is known here; PutKeyPolicy is limited to RSA_2048 '
      + 'signing keys, and the function puts the stack\'s rotated-key policy only on the keys its schedule lists. Through IAM (the keys\' '
      + 'first statement), so that a rotation role CloudFormation replaced, or keys an earlier version created, still get it.');
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['kms:CreateKey'], resources: ['*'] }));
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions: ['kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias'],
      resources: [aliases],
    }));
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      actions: ['kms:PutKeyPolicy'],
      resources: [keys],
      conditions: { StringEquals: { 'kms:KeySpec': 'RSA_2048', 'kms:KeyUsage': 'SIGN_VERIFY', 'kms:CallerAccount': account } },
    }));
    // The stack's own status tells its deletion from a rollback or a replacement (the lifecycle's Delete).
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['cloudformation:DescribeStacks'], resources: [stack.stackId] }));
    this.grantOnOwnKey(grantee, ['kms:GetPublicKey', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias']);
    this.roles.rotate = this.roleOf(grantee, 'rotate');
    grantee.addEnvironment(ENV.signingKeyPolicy, this.rotatedKeyPolicyJson);
    grantee.addEnvironment(ENV.signingKeyStackId, stack.stackId);
  }

  /**
   * The key policy of every key the rotation creates: the account (administrators, through IAM, as
   * in KMS's default key policy), kms:Sign for the token function's role, the rotation's actions for
   * the rotation function's role, both named by ARN (a principal, not a condition on tags).
   */
  rotatedKeyPolicy(): PolicyDocument {
    const { sign, rotate } = this.roles;
    if (!sign || !rotate) throw new Error('The rotated keys\' policy needs both roles: grantSign and grantRotate');
    return new PolicyDocument({
      statements: [
        new PolicyStatement({ sid: 'AccountAdministration', principals: [new AccountRootPrincipal()], actions: ['kms:*'], resources: ['*'] }),
        new PolicyStatement({ sid: 'TokenSigning', principals: [new ArnPrincipal(sign.roleArn)], actions: ['kms:Sign'], resources: ['*'] }),
        new PolicyStatement({
          sid: 'SigningKeyRotation',
          principals: [new ArnPrincipal(rotate.roleArn)],
          actions: ['kms:GetPublicKey', 'kms:ScheduleKeyDeletion', 'kms:CreateAlias', 'kms:UpdateAlias', 'kms:DeleteAlias'],
          resources: ['*'],
        }),
      ],
    });
  }

  private grantOnOwnKey(grantee: IGrantable, actions: string[]) {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [this.key.keyArn] }));
  }

  private roleOf(grantee: IGrantable, use: 'sign' | 'rotate'): IRole {
    const role = grantee.grantPrincipal as Partial<IRole>;
    if (typeof role.roleArn !== 'string' || !(role instanceof Construct)) throw new Error('A signing-key grantee must be a role of this app');
    if (this.roles[use] && this.roles[use] !== role) throw new Error(`Only one role may ${use} with the rotated keys`);
    Tags.of(role).add(UPGRADE_ROLE_TAG_KEY, `${this.tagValue}:${use}`);
    return role as IRole;
  }
}
