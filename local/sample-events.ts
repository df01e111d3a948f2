import { createHash, randomUUID } from 'node:crypto';
import { DeleteCommand } from '#shared/data/commands';
import type { DocumentClient } from '#shared/data/document-client';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { formCsrfToken } from '#shared/http/csrf';
import { newSecretReveal } from '#shared/console/developer';
import { hashSecret, randomToken } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { clientKey, deliveryKey, deviceKey, linkKey, secretRevealKey, totpEnrolmentKey } from '#shared/data/item-keys';
import { createFactorRepo } from '#shared/data/factor-repo';
import { newTotpSecret } from '#shared/accounts/totp';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { newWebhookId } from '#shared/domain/webhook';
import { testEvent } from '#shared/webhooks/events';
import { createLinkRepo, type LinkPurpose } from '#shared/data/link-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import type { Client } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { endpointOf, ROUTES, type FunctionName } from '#functions/registry';
import type { Sample, SampleKit as Kit, SampleRequest, SampleUser, ScheduledInput } from '#shared/declaration';
import type { HttpMethod } from '#shared/routes';
import type { ServiceFacts } from '#local/service';

export type { ScheduledInput };

/** A sample API Gateway event for one function (or a scheduled function's input), as `npm run invoke` sends it. */
export interface SampleEvent extends Sample {
  /** Removes what preparing the event stored (a session, an e-mailed link, a scratch application). */
  cleanup(): Promise<void>;
}

/** What the samples need to know of the running service. */
export type SampleFacts = Pick<ServiceFacts, 'apiUrl' | 'authUrl' | 'tableName' | 'dynamodbEndpoint' | 'demoClient' | 'users'>;

/**
 * Builds the sample event of `fn` (`sample.make` of its declaration, functions/<area>/<fn>.route.ts)
 * against a running local service seeded with the demo data. A page that needs a signed-in user
 * gets a session of a demo user, made for this call and ended after it; forms carry a CSRF token in
 * both cookie and field. `given`: the client to store through, left open (the benchmark's
 * preparation client); without it, one of its own, closed by the cleanup.
 */
export async function sampleEvent(fn: FunctionName, facts: SampleFacts, given?: DocumentClient): Promise<SampleEvent> {
  const { sample } = endpointOf(fn);
  const doc = given ?? createDocumentClient({ endpoint: facts.dynamodbEndpoint });
  const undo: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    try {
      for (const step of undo.reverse()) await step();
    } finally {
      if (!given) doc.destroy();
    }
  };
  try {
    return { ...(await sample.make(new SampleKit(fn, facts, doc, undo))), cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

const SCRATCH_APP_NAME = 'Scratch application (npm run invoke)';
/** A public address as an IPv6 literal (example.com's), so the URL check passes without DNS; the samples deliver nothing there. */
const SAMPLE_WEBHOOK_URL = 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/webhooks';
const CODE_VERIFIER = 'sample-code-verifier-for-npm-run-invoke-0123456789';

/** What the samples of function `fn` are made of (shared/declaration.ts SampleKit): the demo users, a session, a link, a scratch application, the event. */
class SampleKit implements Kit {
  readonly confirmed: SampleUser;
  readonly unconfirmed: SampleUser;
  readonly demoClient: SampleFacts['demoClient'];
  readonly scratchAppName = SCRATCH_APP_NAME;
  readonly webhookUrl = SAMPLE_WEBHOOK_URL;
  readonly codeVerifier = CODE_VERIFIER;
  private readonly csrf = randomToken();

  constructor(
    private readonly fn: FunctionName, private readonly facts: SampleFacts, private readonly doc: DocumentClient,
    private readonly undo: (() => Promise<unknown>)[],
  ) {
    this.demoClient = facts.demoClient;
    const user = (confirmed: boolean) => facts.users.find((u) => u.emailConfirmed === confirmed) ?? facts.users[0]!;
    this.confirmed = user(true);
    this.unconfirmed = user(false);
  }

  private get table() {
    return { doc: this.doc, table: this.facts.tableName };
  }

  /** A DynamoDB stream event (as Lambda sends it): the confirmed demo user's first device renamed. */
  deviceRenameRecord(): ScheduledInput {
    const userId = this.confirmed.id;
    const deviceId = this.confirmed.devices[0]!;
    const { pk, sk } = deviceKey(userId, deviceId);
    const image = (name: string, seq: number) => ({
      pk: { S: pk }, sk: { S: sk }, id: { S: deviceId }, name: { S: name }, seq: { N: String(seq) },
    });
    return {
      Records: [{
        eventID: randomUUID(), eventName: 'MODIFY', eventSource: 'aws:dynamodb', awsRegion: 'us-east-1',
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: { pk: { S: pk }, sk: { S: sk } },
          OldImage: image('Before', 1), NewImage: image('After', 2), StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      }],
    };
  }

  /** An SQS event (as Lambda sends it) of one delivery-queue message. */
  queueMessage(message: Record<string, unknown>): ScheduledInput {
    const body = JSON.stringify(message);
    return {
      Records: [{
        messageId: randomUUID(), receiptHandle: randomUUID(), body, md5OfBody: createHash('md5').update(body).digest('hex'),
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'local', ApproximateFirstReceiveTimestamp: String(Date.now()) },
        messageAttributes: {}, eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:webhook-deliveries', awsRegion: 'us-east-1',
      }],
    };
  }

  /** A session of the user (default: the confirmed demo user), ended after the call; its cookie. */
  async session(user: SampleUser = this.confirmed): Promise<string> {
    const sessions = createSessionRepo(this.table);
    const id = await sessions.createSession(user.id);
    this.undo.push(() => sessions.deleteSession(id));
    return `session=${encodeURIComponent(id)}`;
  }

  /** A live e-mailed link of the user, removed after the call if still unused; its token. */
  async link(purpose: LinkPurpose, user: SampleUser): Promise<string> {
    const token = await createLinkRepo(this.table).createLink(purpose, user.id);
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: linkKey(hashSecret(token)) })));
    return token;
  }

  /** An authenticator-app enrolment of the confirmed demo user waiting for its first code, removed after the call. */
  async totpEnrolment(): Promise<void> {
    await createFactorRepo(this.table).startTotpEnrolment(this.confirmed.id, newTotpSecret(), new Date());
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: totpEnrolmentKey(this.confirmed.id) })));
  }

  /**
   * An application of the confirmed demo user, removed after the call (with its webhook and its
   * deliveries, whether the sample or the function made them); `webhook`: registered with one. Its client id.
   */
  async scratchApp({ webhook = false }: { webhook?: boolean } = {}): Promise<string> {
    const clients = createClientRepo(this.table);
    const webhooks = createWebhookRepo(this.table);
    const app = this.scratchClient();
    await clients.createClient(app);
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: clientKey(app.clientId) })));
    this.undo.push(async () => {
      await webhooks.removeSubscription(app.clientId);
      for (const d of await webhooks.listDeliveries(app.clientId, 100)) {
        await this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: deliveryKey(app.clientId, d.createdAt, d.webhookId) }));
      }
    });
    if (webhook) await webhooks.setUrl(app.clientId, SAMPLE_WEBHOOK_URL);
    return app.clientId;
  }

  /** A delivered test event of a scratch application (removed with it); its webhook id. */
  async scratchDelivery(clientId: string): Promise<string> {
    const webhooks = createWebhookRepo(this.table);
    const at = new Date();
    const webhookId = newWebhookId(at);
    await webhooks.createDelivery({ clientId, webhookId, eventType: 'webhook.test', payload: JSON.stringify(testEvent(clientId, at)) }, at);
    await webhooks.recordAttempt(clientId, webhookId, { status: 'delivered', at, statusCode: 204, latencyMs: 12 });
    return webhookId;
  }

  /** A scratch application registered as the console does, its secret waiting to be shown: its id and the cookie of the secret's key. */
  async scratchAppWithSecretToShow(): Promise<{ clientId: string; cookie: string }> {
    const clients = createClientRepo(this.table);
    const app = this.scratchClient();
    const { reveal, cookie } = newSecretReveal(app, randomToken(), 'registered', new Date(), false);
    await clients.registerClient(app, reveal);
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: secretRevealKey(reveal.keyHash) })));
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: clientKey(app.clientId) })));
    return { clientId: app.clientId, cookie: cookie.split(';')[0]! };
  }

  private scratchClient(): Client {
    const now = formatTimestamp(new Date());
    return {
      clientId: `sample-${randomUUID()}`, secretHash: hashSecret(randomToken()), name: SCRATCH_APP_NAME, description: '',
      website: 'https://app.example', redirectUris: ['https://app.example/callback'],
      developerId: this.confirmed.id, developerName: this.confirmed.email, createdAt: now, secretCreatedAt: now,
    };
  }

  /** The demo application's registration as its edit form shows it. */
  async demoClientRegistration(): Promise<Record<string, string>> {
    const app = await createClientRepo(this.table).getClient(this.facts.demoClient.clientId);
    if (!app) throw new Error(`The demo application ${this.facts.demoClient.clientId} is not in table ${this.facts.tableName}.`);
    return { name: app.name, description: app.description, website: app.website, redirect_uris: app.redirectUris.join('\n') };
  }

  /** An authorization request of the demo application (code flow with PKCE). */
  authorizeParams(): Record<string, string> {
    return {
      response_type: 'code',
      client_id: this.facts.demoClient.clientId,
      redirect_uri: this.facts.demoClient.redirectUri,
      scope: 'read_user read_device',
      state: 'sample-state',
      code_challenge: createHash('sha256').update(CODE_VERIFIER).digest('base64url'),
      code_challenge_method: 'S256',
    };
  }

  /** HTTP Basic credentials of the demo application (client_secret_basic). */
  demoClientBasic(): string {
    const { clientId, clientSecret } = this.facts.demoClient;
    return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  }

  /** A resource-API request of the confirmed demo user, as the JWT authorizer passes it on. */
  api(description: string, json?: unknown): Sample {
    const device = this.confirmed.devices[0] ?? '';
    const route = routeOf(this.fn);
    return {
      description,
      event: this.event({
        ...(route.path.includes('{device_id}') ? { pathParameters: { device_id: device } } : {}),
        ...(json === undefined ? {} : { json }),
      }),
    };
  }

  /** Any other request: a page, a form, or a public JSON endpoint. */
  page(description: string, spec: SampleRequest = {}): Sample {
    return { description, event: this.event(spec) };
  }

  private event(spec: SampleRequest): APIGatewayProxyEventV2 {
    const route = spec.route ? { ...routeOf(this.fn), ...spec.route } : routeOf(this.fn);
    const method = spec.method ?? (route.method as HttpMethod);
    const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(spec.pathParameters?.[name] ?? ''));
    const host = new URL(route.api === 'resource' ? this.facts.apiUrl : this.facts.authUrl).host;
    const query = new URLSearchParams(spec.query ?? {}).toString();
    const cookies = [...(spec.cookies ?? []), ...(spec.form ? [`csrf=${this.csrf}`] : [])];
    const headers: Record<string, string> = { host, 'user-agent': 'npm-run-invoke', ...spec.headers };
    let body: string | undefined;
    if (spec.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      // The token the page would print: bound to the session when the request has one.
      body = new URLSearchParams({ ...spec.form, csrf: formCsrfToken(cookies) ?? this.csrf }).toString();
    } else if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.json);
    }
    const routeKey = `${route.method} ${route.path}`;
    const now = new Date();
    return {
      version: '2.0',
      routeKey,
      rawPath: path,
      rawQueryString: query,
      ...(cookies.length ? { cookies } : {}),
      headers,
      ...(spec.query ? { queryStringParameters: { ...spec.query } } : {}),
      ...(spec.pathParameters ? { pathParameters: { ...spec.pathParameters } } : {}),
      requestContext: {
        accountId: 'local', apiId: 'local', domainName: host, domainPrefix: host.split('.')[0] ?? host,
        requestId: randomUUID(), routeKey, stage: '$default', time: now.toUTCString(), timeEpoch: now.getTime(),
        http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'npm-run-invoke' },
        ...(route.scopes ? {
          authorizer: {
            jwt: {
              claims: { iss: this.facts.authUrl, aud: this.facts.apiUrl, sub: this.confirmed.id, client_id: 'local-invoke', scope: route.scopes.join(' ') },
              scopes: [...route.scopes],
            },
          },
        } : {}),
      },
      ...(body === undefined ? {} : { body }),
      isBase64Encoded: false,
    } as APIGatewayProxyEventV2;
  }
}

function routeOf(fn: FunctionName) {
  const route = ROUTES.find((r) => r.fn === fn);
  // The fallback has no route of its own: it answers `ANY <path>` and `$default`.
  return route ?? { api: 'resource' as const, method: 'ANY' as const, path: '/user', fn, scopes: undefined };
}
