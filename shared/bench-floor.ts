// A function's floor, as the benchmark (bench/floors.ts) runs it and a declaration's `bench` states
// it: the fewest steps its design allows, written by item kind. Data only, so that the declarations
// (shared/declaration.ts) can state their floor; nothing here runs a step.

/** The kinds of items the service stores. `throttle` has no stand-in to read: a first login finds none (it writes them). */
export type ItemKind =
  | 'user' | 'email' | 'device' | 'session' | 'client' | 'consent' | 'code' | 'family' | 'link' | 'reveal' | 'throttle'
  | 'knownBrowser' | 'mailLimit' | 'webhook' | 'delivery' | 'keySchedule'
  // Strong sign-in (shared/data/factor-repo.ts, passkey-repo.ts).
  | 'totp' | 'totpEnrolment' | 'recoveryCodes' | 'recoveryReveal' | 'pendingSignIn' | 'passkey' | 'passkeyClaim' | 'challenge';

export type FloorStep =
  | { op: 'GetItem'; of: ItemKind }
  | { op: 'BatchGetItem'; of: ItemKind[] }
  /** A Query whose result holds `count` items of that kind, on the table or on gsi1. */
  | { op: 'Query'; of: ItemKind; count: number; index?: 'gsi1' }
  | { op: 'PutItem'; of: ItemKind }
  | { op: 'UpdateItem'; of: ItemKind }
  | { op: 'DeleteItem'; of: ItemKind }
  | { op: 'TransactWriteItems'; of: ItemKind[] }
  /** One scrypt derivation with the service's parameters (hashing and verifying cost the same). */
  | { op: 'scrypt' }
  /** One RS256 signature of an access token (locally with the key file, in AWS a KMS Sign request). */
  | { op: 'sign' }
  /** The answer leaves no sooner than `ms` after the call began (the work runs meanwhile). */
  | { op: 'wait'; ms: number }
  /** One password strength estimate (zxcvbn with its dictionaries, loaded on first use as the functions do). */
  | { op: 'zxcvbn' }
  /** One QR code of an authenticator app's otpauth:// URI drawn as SVG (the encoder the set-up pages carry). */
  | { op: 'qrCode' }
  /** One passkey answer verified: a sign-in's signature or a registration's attestation (the WebAuthn library, loaded on first use as the functions do). */
  | { op: 'passkeyCheck'; ceremony: 'get' | 'create' }
  /** One e-mail sent (locally a file in the outbox, as the functions' mailer writes it; in AWS an SES request). */
  | { op: 'mail' }
  /** Checking that a webhook URL's IP literal is a public address (parsing it). */
  | { op: 'addressCheck' }
  /**
   * The SQS client library in the bundle, as a function that queues webhook deliveries carries it
   * (no client, no request): the floor runs as the floor-queue bundle (bench/baseline/floor-queue.ts).
   */
  | { op: 'queueClient' }
  /**
   * One message sent to the webhook delivery queue (one SendMessageBatch, through an SQS client made
   * for it, written out as shared/webhooks/queue.ts configures it): runs as the floor-queue bundle.
   */
  | { op: 'queueSend' }
  /**
   * One webhook delivered: a payload signed as Standard Webhooks signs it (HMAC-SHA256 with the
   * subscription's secret) and POSTed to the receiver, whose answer is read.
   */
  | { op: 'signedPost' }
  /**
   * The KMS client library in the bundle, as the signing-key rotation carries it (no client, no
   * request): the floor runs as the floor-kms bundle (bench/baseline/floor-kms.ts).
   */
  | { op: 'kmsClient' };

/** Floor steps, as scenarios write them. */
export const step = {
  get: (of: ItemKind): FloorStep => ({ op: 'GetItem', of }),
  batchGet: (...of: ItemKind[]): FloorStep => ({ op: 'BatchGetItem', of }),
  query: (of: ItemKind, count: number, index?: 'gsi1'): FloorStep => ({ op: 'Query', of, count, ...(index ? { index } : {}) }),
  put: (of: ItemKind): FloorStep => ({ op: 'PutItem', of }),
  update: (of: ItemKind): FloorStep => ({ op: 'UpdateItem', of }),
  delete: (of: ItemKind): FloorStep => ({ op: 'DeleteItem', of }),
  transact: (...of: ItemKind[]): FloorStep => ({ op: 'TransactWriteItems', of }),
  scrypt: (): FloorStep => ({ op: 'scrypt' }),
  sign: (): FloorStep => ({ op: 'sign' }),
  wait: (ms: number): FloorStep => ({ op: 'wait', ms }),
  zxcvbn: (): FloorStep => ({ op: 'zxcvbn' }),
  passkeyCheck: (ceremony: 'get' | 'create'): FloorStep => ({ op: 'passkeyCheck', ceremony }),
  qrCode: (): FloorStep => ({ op: 'qrCode' }),
  mail: (): FloorStep => ({ op: 'mail' }),
  addressCheck: (): FloorStep => ({ op: 'addressCheck' }),
  queueClient: (): FloorStep => ({ op: 'queueClient' }),
  queueSend: (): FloorStep => ({ op: 'queueSend' }),
  signedPost: (): FloorStep => ({ op: 'signedPost' }),
  kmsClient: (): FloorStep => ({ op: 'kmsClient' }),
};

/**
 * What the benchmark measures of a function whose sample (shared/declaration.ts SampleSpec) is the
 * call to measure: its default scenario (bench/scenarios.ts) sends one fresh sample per call and
 * expects the sample's status; this says what the design allows that call.
 */
export interface BenchSpec {
  /**
   * The fewest steps the design allows for the sample's call, in order: DynamoDB requests of the
   * kinds it needs (their count is the minimum of requests per call), plus scrypt, a fixed wait or
   * another step where the design mandates one. The function's cold start is divided by this floor's.
   */
  floor: readonly FloorStep[];
  /** Why the floor is what it is. */
  minReason: string;
}

/** The `bench` member of a declaration: present when the sample is what the benchmark measures (no scenario of its own in bench/scenarios.ts). */
export interface BenchOption {
  bench?: BenchSpec;
}
