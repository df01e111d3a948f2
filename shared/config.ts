/**
 * The environment variables the functions read. `infra/` imports these names too, so the stack
 * and the code cannot disagree about them.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  /** Issuer of access tokens: the authorization server's base URL. */
  issuer: 'AUTH_ISSUER',
  /** Audience of access tokens: the resource API's base URL. */
  audience: 'API_AUDIENCE',
  /** KMS key id of the token signing key (AWS). Absent locally. */
  signingKeyId: 'SIGNING_KEY_ID',
  /** Path of the local signing key file (local service only). */
  localSigningKeyFile: 'LOCAL_SIGNING_KEY_FILE',
  /** DynamoDB endpoint override (DynamoDB Local). Absent in AWS. */
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV] | (typeof MAIL_ENV)[keyof typeof MAIL_ENV];

/** Reads a required variable, failing fast with its name. */
export function requireEnv(name: EnvName): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

/** Reads an optional variable; empty counts as absent. */
export function optionalEnv(name: EnvName): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** E-mail settings, read by the functions that send mail. */
export const MAIL_ENV = {
  /** Verified SES sender address (AWS). */
  sender: 'MAIL_FROM',
  /** Folder of the local outbox; when set, mail is written there instead of sent through SES. */
  outboxDir: 'OUTBOX_DIR',
} as const;
