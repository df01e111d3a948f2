/**
 * The environment variables the functions read, and the only module that reads them. `infra/`,
 * `local/` and the benchmark import these names too, so whoever sets a variable and the code that
 * reads it cannot disagree about its name.
 */
export const ENV = {
  tableName: 'TABLE_NAME',
  /** Issuer of access tokens: the authorization server's base URL. */
  issuer: 'AUTH_ISSUER',
  /** Audience of access tokens: the resource API's base URL. */
  audience: 'API_AUDIENCE',
  /** KMS key id of the token signing key (AWS). Absent locally. */
  signingKeyId: 'SIGNING_KEY_ID',
  /** Value of the tag `device-user-service:signing-key` that marks this stack's signing keys in KMS (rotation function). */
  signingKeyTag: 'SIGNING_KEY_TAG',
  /** Prefix of the KMS aliases of the signing keys, `alias/<stack>-signing` (rotation function). */
  signingKeyAliasPrefix: 'SIGNING_KEY_ALIAS_PREFIX',
  /** Path of the local signing key file (local service only). */
  localSigningKeyFile: 'LOCAL_SIGNING_KEY_FILE',
  /** DynamoDB endpoint override (DynamoDB Local). Absent in AWS. */
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
} as const;

export type EnvName =
  | (typeof ENV)[keyof typeof ENV]
  | (typeof MAIL_ENV)[keyof typeof MAIL_ENV]
  | (typeof AWS_ENV)[keyof typeof AWS_ENV]
  | (typeof LOG_ENV)[keyof typeof LOG_ENV];

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

/** Set by the Lambda runtime; the local service and the benchmark set them to the same effect. */
export const AWS_ENV = {
  /** The region the function runs in (DynamoDB Local accepts any). */
  region: 'AWS_REGION',
} as const;

/** The logger's settings (shared/log.ts), named as Powertools for AWS Lambda's logger names them. */
export const LOG_ENV = {
  /** The level chosen in Lambda's advanced logging controls; wins when valid. */
  lambdaLevel: 'AWS_LAMBDA_LOG_LEVEL',
  level: 'POWERTOOLS_LOG_LEVEL',
  /** Read when neither of the two above is set. */
  fallbackLevel: 'LOG_LEVEL',
  /** Pretty-printed lines for a developer's terminal. */
  dev: 'POWERTOOLS_DEV',
  sampleRate: 'POWERTOOLS_LOGGER_SAMPLE_RATE',
  /** The X-Ray trace header of the current invocation: Lambda sets it anew for every request. */
  traceHeader: '_X_AMZN_TRACE_ID',
} as const;
