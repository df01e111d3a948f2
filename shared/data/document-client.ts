import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { isServerError, isThrottlingError, isTransientError, StandardRetryStrategy } from '@smithy/core/retry';
import { HttpRequest } from '@smithy/core/transport';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, RetryErrorType } from '@smithy/types';
import { awsClientConfig, type AwsCallLimits } from '#shared/aws/client-config';
import type { CommandClass, TableCommand } from '#shared/data/commands';
import { fromWire, parseAnswer, requestBody, serviceError, toWire } from '#shared/data/json-protocol';

/**
 * The DynamoDB client of every repository: the document client's requests (shared/data/commands.ts)
 * and answers, sent over DynamoDB's JSON protocol with the AWS SDK's own parts — its credentials
 * chain, its HTTP handler with AWS_CALL_LIMITS' timeouts, its standard retry strategy, its SigV4
 * signer, util-dynamodb's marshalling — but neither the SDK's DynamoDB client nor its per-request
 * middleware stack. That stack (a dozen middlewares resolved and run per call: endpoint rules with
 * a spread of the whole configuration, schema serde, user agent, checksums, logging) cost about
 * 0.5 ms of CPU per request, and the client's schemas and rules some 45 KB of every bundle. See
 * docs/design.md, "The repositories' client".
 *
 * The document client's semantics are kept: plain values in, plain values out (undefined members
 * dropped, numbers as numbers), errors named as DynamoDB names them, with its message, `$fault`,
 * `$metadata` and members such as `CancellationReasons` and a failed condition's `Item` (in
 * DynamoDB's JSON, as the SDK leaves them). `middlewareStack.add` takes the SDK's middleware shape at
 * its `initialize` step (the document's input) and `serialize` step (the marshalled input), for the
 * hooks of tests and of the local runtime.
 */
export class DocumentClient {
  readonly #signer: SignatureV4;
  readonly #retry: StandardRetryStrategy;
  readonly #endpoint: URL | undefined;
  readonly #middlewares: { name: string; step: Step; middleware: Middleware }[] = [];
  /** The HTTP handler (a test may loosen its timeouts). */
  readonly config: { requestHandler: NodeHttpHandler };

  /**
   * With `endpoint` (DynamoDB Local): that URL, placeholder credentials, any region. Without: the
   * regional endpoint of `region` (Lambda's AWS_REGION), credentials from the SDK's default chain
   * (Lambda's environment; a profile, SSO or an instance role for the operator's tools).
   */
  constructor({ endpoint, region, limits, credentials }: DocumentClientOptions = {}) {
    const { maxAttempts, sha256, requestHandler } = awsClientConfig(limits);
    this.config = { requestHandler: new NodeHttpHandler(requestHandler) };
    this.#retry = new StandardRetryStrategy(maxAttempts);
    this.#endpoint = endpoint === undefined ? regionalEndpoint(region) : new URL(endpoint);
    this.#signer = new SignatureV4({
      credentials: credentials ?? (endpoint === undefined ? memoized(defaultProvider()) : LOCAL_CREDENTIALS),
      region: endpoint === undefined ? (region ?? 'unknown') : (region ?? 'local'),
      service: 'dynamodb',
      sha256,
    });
  }

  /** The SDK's middleware shape, for hooks that observe or alter calls (tests, the IAM recording). */
  readonly middlewareStack = {
    add: (middleware: Middleware, { step = 'initialize', name = `middleware-${this.#middlewares.length}` }: { step?: string; name?: string; priority?: string } = {}) => {
      if (step !== 'initialize' && step !== 'serialize') throw new Error(`DocumentClient middlewares run at 'initialize' or 'serialize', not '${step}'`);
      this.#middlewares.push({ name, step, middleware });
    },
    remove: (name: string): boolean => {
      const index = this.#middlewares.findIndex((entry) => entry.name === name);
      if (index >= 0) this.#middlewares.splice(index, 1);
      return index >= 0;
    },
  };

  /** Sends a command; answers as the document client does (items as plain objects). */
  async send<C extends TableCommand<object, object>>(command: C): Promise<C['output']> {
    const { operation, nodes } = command.constructor as unknown as CommandClass;
    if (typeof operation !== 'string') throw new Error('DocumentClient sends the commands of shared/data/commands.ts only');
    const wire = (args: Args) => this.#call(operation, args.input).then((output) => ({ output }));
    const marshalled = (args: Args) => this.#run('serialize', operation, wire)({ input: toWire(args.input, nodes.input) });
    const { output } = await this.#run('initialize', operation, marshalled)({ input: command.input as Record<string, unknown> });
    return fromWire(output, nodes.output) as C['output'];
  }

  /** Closes the HTTP handler's sockets. */
  destroy(): void {
    this.config.requestHandler.destroy();
  }

  /** `handler` behind the middlewares of `step`, the first added outermost (as the SDK orders a step's middlewares). */
  #run(step: Step, operation: string, handler: Handler): Handler {
    const context = { clientName: 'DynamoDBClient', commandName: `${operation}Command` };
    return this.#middlewares.filter((entry) => entry.step === step)
      .reduceRight<Handler>((next, { middleware }) => middleware(next, context), handler);
  }

  /** One call with the SDK's retry strategy: each attempt signed anew; the last error is thrown. */
  async #call(operation: string, input: unknown): Promise<Record<string, unknown>> {
    const retry = this.#retry;
    let token = await retry.acquireInitialRetryToken('dynamodb');
    const body = requestBody(input);
    let attempts = 0;
    let totalRetryDelay = 0;
    for (;;) {
      attempts += 1;
      try {
        const output = await this.#attempt(operation, body, { attempts, totalRetryDelay });
        retry.recordSuccess(token);
        return output;
      } catch (error) {
        // As the SDK's retry middleware does, also for a network error or timeout, which has no answer.
        const failed = error as { $metadata?: Record<string, unknown> };
        failed.$metadata = { ...failed.$metadata, attempts, totalRetryDelay };
        try {
          token = await retry.refreshRetryTokenForRetry(token, { errorType: errorTypeOf(error as Error) });
        } catch {
          throw error;
        }
        const delay = token.getRetryDelay();
        totalRetryDelay += delay;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async #attempt(operation: string, body: string, progress: { attempts: number; totalRetryDelay: number }): Promise<Record<string, unknown>> {
    const url = this.#endpoint;
    if (url === undefined) throw new Error('DocumentClient: no region (AWS_REGION) and no endpoint (DYNAMODB_ENDPOINT)');
    const request = new HttpRequest({
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: url.pathname,
      method: 'POST',
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'content-length': String(Buffer.byteLength(body)),
        'x-amz-target': `DynamoDB_20120810.${operation}`,
        'user-agent': USER_AGENT,
      },
      body,
    });
    const signed = await this.#signer.sign(request);
    const { response } = await this.config.requestHandler.handle(signed as HttpRequest);
    const chunks: Buffer[] = [];
    for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    const metadata = { httpStatusCode: response.statusCode, requestId: response.headers['x-amzn-requestid'], ...progress };
    const parsed = parseAnswer(text);
    if (response.statusCode >= 200 && response.statusCode < 300 && parsed) return parsed;
    throw serviceError(response.statusCode, response.headers, parsed, metadata);
  }
}

type Step = 'initialize' | 'serialize';
type Args = { input: Record<string, unknown> };
type Handler = (args: Args) => Promise<{ output: Record<string, unknown> }>;
type Middleware = (next: Handler, context: { clientName: string; commandName: string }) => Handler;

export interface DocumentClientOptions {
  /** DynamoDB Local's URL; absent in AWS. */
  endpoint?: string;
  /** The region: AWS's, or the one named to DynamoDB Local (default `local`). */
  region?: string;
  /** Looser limits than the service's (AWS_CALL_LIMITS), for tools and tests only. */
  limits?: Partial<AwsCallLimits>;
  /** Credentials of a test's own; by default placeholders with an endpoint, else the SDK's default chain. */
  credentials?: AwsCredentialIdentity;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * DynamoDB's regional endpoint (https://docs.aws.amazon.com/general/latest/gr/ddb.html): in the
 * China regions under amazonaws.com.cn, the European Sovereign Cloud under amazonaws.eu, elsewhere
 * amazonaws.com. Undefined without a region: the first request says so.
 */
function regionalEndpoint(region: string | undefined): URL | undefined {
  if (region === undefined) return undefined;
  if (!/^[a-z0-9-]+$/.test(region)) throw new Error(`DocumentClient: "${region}" is not an AWS region`);
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : region.startsWith('eusc-') ? 'amazonaws.eu' : 'amazonaws.com';
  return new URL(`https://dynamodb.${region}.${suffix}/`);
}

/**
 * A credentials provider asked again only when what it gave expires within 5 minutes (as the SDK's
 * memoization does); concurrent first calls share one request.
 */
export function memoized(provider: () => Promise<AwsCredentialIdentity>): () => Promise<AwsCredentialIdentity> {
  let current: Promise<AwsCredentialIdentity> | undefined;
  return async () => {
    const held = current && (await current.catch(() => undefined));
    if (held && (held.expiration === undefined || held.expiration.getTime() - Date.now() > 5 * 60_000)) return held;
    current = provider();
    current.catch(() => {
      current = undefined;
    });
    return current;
  };
}

/** What the SDK sends as its user agent, less the per-call feature flags: CloudTrail shows it. */
const USER_AGENT = `aws-sdk-js lang/js md/nodejs#${process.versions.node} api/dynamodb lib/device-user-service`;

/** How the SDK's retry middleware classifies an error for its retry strategy. */
function errorTypeOf(error: Error & { $metadata?: { httpStatusCode?: number } }): RetryErrorType {
  if (isThrottlingError(error as never)) return 'THROTTLING';
  if (isTransientError(error as never)) return 'TRANSIENT';
  if (isServerError(error as never)) return 'SERVER_ERROR';
  return 'CLIENT_ERROR';
}
