import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface SigningKeyProps {
  /** Retained when the stack goes (a stage that keeps its data); else scheduled for deletion in 7 days. */
  keep: boolean;
}

/** The access-token signing key: RSA_2048 in KMS; the private half never leaves KMS. */
export class SigningKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: SigningKeyProps) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Signs the access tokens of the Device and User Service (RS256)',
      keySpec: KeySpec.RSA_2048,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: props.keep ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      ...(props.keep ? {} : { pendingWindow: Duration.days(7) }),
    });
    Validations.of(this.key).acknowledge({
      id: 'AwsSolutions-KMS5',
      reason: 'KMS does not rotate asymmetric keys automatically; rotation is a new key and kid, published in the JWKS.',
    });
  }

  /** kms:Sign, for the one function that issues tokens. */
  grantSign(grantee: IGrantable) {
    this.key.grant(grantee, 'kms:Sign');
  }

  /** kms:GetPublicKey, for the JWKS. */
  grantVerify(grantee: IGrantable) {
    this.key.grant(grantee, 'kms:GetPublicKey');
  }
}
