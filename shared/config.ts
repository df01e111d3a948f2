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
  /**
   * The name of this deployment of the stack, `<stack name>/<unique part of its stack id>`: the value
   * of the tag `device-user-service:signing-key` on its own key, and in each rotated key's description (rotation function).
   */
  signingKeyTag: 'SIGNING_KEY_TAG',
  /** The key policy (JSON) of every key the rotation creates, rendered by the stack (rotation function). */
  signingKeyPolicy: 'SIGNING_KEY_POLICY',
  /** Prefix of the KMS aliases of the signing keys, `alias/<stack>-signing` (rotation function). */
  signingKeyAliasPrefix: 'SIGNING_KEY_ALIAS_PREFIX',
  /**
   * The id (ARN) of the stack that holds the signing-key lifecycle resource: the rotation function
   * reads its status (DescribeStacks) to tell the stack's deletion from a rollback. Absent locally.
   */
  signingKeyStackId: 'SIGNING_KEY_STACK_ID',
  /** Path of the local signing key file (local service only). */
  localSigningKeyFile: 'LOCAL_SIGNING_KEY_FILE',
  /** DynamoDB endpoint override (DynamoDB Local). Absent in AWS. */
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
} as const;

export type EnvName =
  | (typeof ENV)[keyof typeof ENV]
  | (typeof MAIL_ENV)[keyof typeof MAIL_ENV]
  | (typeof AWS_ENV)[keyof typeof AWS_ENV]
  | (typeof LOG_ENV)[keyof typeof LOG_ENV]
  | (typeof LOCAL_ENV)[keyof typeof LOCAL_ENV]
  | (typeof METRICS_ENV)[keyof typeof METRICS_ENV]
  | (typeof WEBHOOK_ENV)[keyof typeof WEBHOOK_ENV]
  | (typeof SHADOW_ENV)[keyof typeof SHADOW_ENV];

/** A setting with a value that cannot work; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

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

/**
 * A TCP port, `fallback` when unset; 0 picks a free one. Throws ConfigError naming the variable
 * when the value is not a whole number from 0 to 65535.
 */
export function portEnv(name: EnvName, fallback: number): number {
  const value = optionalEnv(name);
  if (value === undefined) return fallback;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535 (0 picks a free port), not '${value}'.`);
  }
  return Number(value);
}

/** E-mail settings, read by the functions that send mail. */
export const MAIL_ENV = {
  /** Verified SES sender address (AWS). */
  sender: 'MAIL_FROM',
  /** SES configuration set every message is sent with (AWS): its event destination counts bounces and complaints. */
  configurationSet: 'MAIL_CONFIGURATION_SET',
  /** Folder of the local outbox; when set, mail is written there instead of sent through SES. */
  outboxDir: 'OUTBOX_DIR',
} as const;

/** The device shadow's settings (shared/shadow/). */
export const SHADOW_ENV = {
  /**
   * The IoT Core data-plane endpoint the shadows are read and written at: the local stand-in
   * (local/iot-data-plane.ts); absent in AWS, where the region's default data endpoint is used.
   */
  dataEndpoint: 'IOT_DATA_ENDPOINT',
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

/** The local runtime's settings (`npm start` and the command-line tools in local/); unused in AWS. */
export const LOCAL_ENV = {
  /** Ports of the resource API, the authorization server and the example application. */
  apiPort: 'API_PORT',
  authPort: 'AUTH_PORT',
  examplePort: 'EXAMPLE_PORT',
  /** Folder where DynamoDB Local keeps its data; unset, it keeps them in memory. */
  dataDir: 'DATA_DIR',
  /** Folder of the local service's state (signing key, outbox, service.json); default `.local`. */
  stateDir: 'STATE_DIR',
  /**
   * Multiplies the webhook queue's timeouts (the retry schedule) in the local service: 1 (default)
   * is the real schedule, 0.001 turns its 30 s into 30 ms.
   */
  webhookTimeScale: 'WEBHOOK_TIME_SCALE',
} as const;

/** The business metrics' settings (shared/metrics.ts), named as Powertools' metrics utility names them. */
export const METRICS_ENV = {
  /** CloudWatch namespace of the Embedded Metric Format lines; the stack sets one per stack. */
  namespace: 'POWERTOOLS_METRICS_NAMESPACE',
} as const;

/** The webhook pipeline's settings (shared/webhooks/). */
export const WEBHOOK_ENV = {
  /** URL of the SQS delivery queue. */
  queueUrl: 'WEBHOOK_QUEUE_URL',
  /** The local queue stand-in's URL (local service only; absent in AWS). */
  sqsEndpoint: 'WEBHOOK_SQS_ENDPOINT',
  /**
   * Local service only: `true` accepts `http://localhost` webhook URLs (checkWebhookUrl's
   * allowLocalHttp). Never set in AWS.
   */
  allowLocalHttp: 'WEBHOOK_ALLOW_LOCAL_HTTP',
  /**
   * The operator's, for `npm run admin -- replay-stream-failures` in AWS: URL of the fan-out's
   * stream-failures queue (the stack's StreamFailuresQueueUrl output). No function has it.
   */
  streamFailuresQueueUrl: 'STREAM_FAILURES_QUEUE_URL',
} as const;

/**
 * Values compiled into the bundles instead of set on the function. In a bundle, esbuild's `define`
 * (infra/bundling.ts BUNDLE_DEFINE) replaces the expression `process.env.<name>` by the value, so
 * the deployed function reads a constant and carries no such variable. In a local process, the
 * registry of the functions (functions/registry.ts) hands the value over when it loads, which is
 * before any handler loads (handlers are found through it), without touching the environment.
 */
export const BUNDLE_ENV = {
  /**
   * The serialisable endpoint table, as JSON (shared/declaration.ts EndpointTable: the routes and the
   * OpenAPI operations): for the two functions that answer from the table, the 405/404 fallback and
   * the OpenAPI document, whose bundles cannot discover the declarations on disk.
   */
  endpointTable: 'ENDPOINT_TABLE',
  /**
   * Whether the function asks for a recent sign-in (EndpointDeclaration.recentSignIn): `yes` or
   * `no`, compiled into each function's bundle on its own (infra/bundling.ts functionDefine).
   */
  recentSignIn: 'RECENT_SIGN_IN',
} as const;

/** The endpoint table the registry handed over in this process (never an environment variable). */
let providedEndpointTable: string | undefined;

/** The endpoint table's JSON (BUNDLE_ENV.endpointTable): compiled into the bundle, or handed over locally. */
export function bundledEndpointTable(): string {
  // Written out as `process.env.ENDPOINT_TABLE`: the expression the bundles' define replaces.
  const value = process.env.ENDPOINT_TABLE || providedEndpointTable;
  if (value === undefined || value === '') {
    throw new Error(`No ${BUNDLE_ENV.endpointTable}: bundle with infra/bundling.ts's settings (its define), or load functions/registry.ts before the handler`);
  }
  return value;
}

/**
 * Hands this process the endpoint table, as a bundle's define does (functions/registry.ts): kept in
 * this module, so child processes and the rest of the environment see nothing of it.
 */
export function provideEndpointTable(json: string): void {
  providedEndpointTable = json;
}

/** The route keys the registry handed over in this process, of the functions that ask for a recent sign-in. */
let providedRecentSignInRoutes: ReadonlySet<string> | undefined;

/**
 * Whether the function that answers `routeKey` asks for a recent sign-in: its bundle's constant
 * (BUNDLE_ENV.recentSignIn), or, in a local process, whether the registry lists the route key. A
 * bundle folds this to a constant and carries no list. Neither (a bundle made without
 * infra/bundling.ts's functionDefine): an error, never a page that skips the question.
 */
export function asksRecentSignIn(routeKey: string): boolean {
  // `process.env.RECENT_SIGN_IN` is the expression the bundles' define replaces: written as the
  // condition of a conditional expression, so that esbuild drops the other branch as dead code and a
  // bundle carries neither the list nor its message.
  return process.env.RECENT_SIGN_IN ? process.env.RECENT_SIGN_IN === 'yes' : listedForRecentSignIn(routeKey);
}

/** A local process's answer: whether the registry listed `routeKey` (an error before it did). */
function listedForRecentSignIn(routeKey: string): boolean {
  if (!providedRecentSignInRoutes) {
    throw new Error(`No ${BUNDLE_ENV.recentSignIn}: bundle with infra/bundling.ts's functionDefine, or load functions/registry.ts before the handler`);
  }
  return providedRecentSignInRoutes.has(routeKey);
}

/** Hands this process the route keys of the functions that ask for a recent sign-in (functions/registry.ts), kept in this module. */
export function provideRecentSignInRoutes(routeKeys: readonly string[]): void {
  providedRecentSignInRoutes = new Set(routeKeys);
}
