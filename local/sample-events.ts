import { createHash, randomUUID } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { newSecretReveal } from '#shared/console/developer';
import { hashSecret, randomToken } from '#shared/secrets';
import { createClientRepo } from '#shared/data/client-repo';
import { createDocumentClient } from '#shared/data/dynamodb';
import { clientKey, deliveryKey, deviceKey, linkKey, secretRevealKey } from '#shared/data/keys';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { newWebhookId } from '#shared/domain/webhook';
import { testEvent } from '#shared/webhooks/events';
import { createLinkRepo, type LinkPurpose } from '#shared/data/link-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { rendererScript } from '#shared/docs/api-reference';
import type { Client } from '#shared/domain/client';
import { formatTimestamp } from '#shared/domain/time';
import { ROUTES, type FunctionName, type HttpMethod } from '#shared/routes';
import type { ServiceFacts } from '#local/service';

/** The input of a function an EventBridge schedule invokes (shared/routes.ts `schedule`). */
export type ScheduledInput = Record<string, unknown>;

/** A sample API Gateway event for one function (or a scheduled function's input), as `npm run invoke` sends it. */
export interface SampleEvent {
  event: APIGatewayProxyEventV2 | ScheduledInput;
  /** What the sample asks, in one line. */
  description: string;
  /** Removes what preparing the event stored (a session, an e-mailed link, a scratch application). */
  cleanup(): Promise<void>;
}

/**
 * Builds the sample event of `fn` against a running local service seeded with the demo data. A
 * page that needs a signed-in user gets a session of a demo user, made for this call and ended
 * after it; forms carry a CSRF token in both cookie and field. A sample succeeds when that leaves
 * the demo data as it was; where success would not (a new password, the demo application's
 * secret), it asks what the page refuses, or works on a scratch application.
 */
export async function sampleEvent(fn: FunctionName, facts: ServiceFacts): Promise<SampleEvent> {
  const doc = createDocumentClient({ endpoint: facts.dynamodbEndpoint });
  const undo: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    try {
      for (const step of undo.reverse()) await step();
    } finally {
      doc.destroy();
    }
  };
  try {
    return { ...(await SAMPLES[fn](new SampleKit(facts, doc, undo))), cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

type Sample = { event: APIGatewayProxyEventV2 | ScheduledInput; description: string };

// Every function has one: adding a function to the route table without a sample fails the type check.
const SAMPLES: Record<FunctionName, (kit: SampleKit) => Sample | Promise<Sample>> = {
  'get-user': (kit) => kit.api('get-user', 'GET /user with a token of the confirmed demo user'),
  'list-devices': (kit) => kit.api('list-devices', 'GET /devices with a token of the confirmed demo user'),
  'get-device': (kit) => kit.api('get-device', 'GET /devices/{device_id}: the demo user’s first device'),
  'update-device': (kit) => kit.api('update-device', 'PUT /devices/{device_id} {"active": true}: away mode on for the demo user’s first device', { active: true }),
  'get-openapi': (kit) => kit.page('get-openapi', 'GET /openapi.json'),
  'get-api-reference': (kit) => kit.page('get-api-reference', 'GET /docs: the API reference page'),
  'get-api-reference-script': (kit) => kit.page('get-api-reference-script', 'GET /docs/reference.js?v=…: the renderer script, as the page asks for it', {
    query: { v: rendererScript().version },
  }),
  'get-avatar': (kit) => kit.page('get-avatar', 'GET /avatars/{file}: the confirmed demo user’s avatar_url, a generated PNG', {
    pathParameters: { file: `${kit.confirmed.id}.png` },
  }),
  'get-discovery': (kit) => kit.page('get-discovery', 'GET /.well-known/openid-configuration'),
  'get-jwks': (kit) => kit.page('get-jwks', 'GET /.well-known/jwks.json'),
  // A report only: a rotation step would change the running service's keys, which a sample must not.
  'rotate-signing-key': () => ({ event: { mode: 'report' }, description: 'the signing-key rotation in report mode: the keys and their phases, nothing changed' }),
  // A stream record of a rename that did not happen: the demo user has authorized no application, so nothing is queued.
  'fan-out-events': (kit) => ({ event: kit.deviceRenameRecord(), description: 'a stream record of a rename of the demo user’s first device: the applications to tell (none authorized: nothing queued)' }),
  'deliver-webhooks': (kit) => ({
    event: kit.queueMessage({ clientId: kit.facts.demoClient.clientId, webhookId: 'msg_000000000_00000000000000000000' }),
    description: 'a delivery-queue message naming a delivery that does not exist: read, nothing sent, no failure reported',
  }),
  'get-authorize': async (kit) => kit.page('get-authorize', 'GET /oauth/authorize for the demo application, signed in: the consent page', {
    query: kit.authorizeParams(), cookies: [await kit.session()],
  }),
  'post-authorize': async (kit) => kit.page('post-authorize', 'POST /oauth/authorize, signed in, decision deny: back to the application with access_denied', {
    form: { ...kit.authorizeParams(), decision: 'deny' }, cookies: [await kit.session()],
  }),
  'post-token': (kit) => kit.page('post-token', 'POST /oauth/token as the demo application with a code never issued: invalid_grant', {
    form: { grant_type: 'authorization_code', code: 'sample-code-never-issued', redirect_uri: kit.facts.demoClient.redirectUri, code_verifier: CODE_VERIFIER },
    headers: { authorization: kit.demoClientBasic() },
  }),
  'post-revoke': (kit) => kit.page('post-revoke', 'POST /oauth/revoke as the demo application, a token never issued: 200 (RFC 7009)', {
    form: { token: 'sample-token-never-issued' }, headers: { authorization: kit.demoClientBasic() },
  }),
  'get-login': (kit) => kit.page('get-login', 'GET /login?return_to=/account, signed out: the sign-in form', { query: { return_to: '/account' } }),
  'post-login': (kit) => kit.page('post-login', 'POST /login with the confirmed demo user’s password: a session and back to /account', {
    form: { email: kit.confirmed.email, password: kit.confirmed.password, return_to: '/account' },
  }),
  'post-logout': async (kit) => kit.page('post-logout', 'POST /logout, signed in: the session ends', { form: {}, cookies: [await kit.session()] }),
  'get-home': (kit) => kit.page('get-home', 'GET /: the account page'),
  'get-signup': (kit) => kit.page('get-signup', 'GET /signup: the sign-up form'),
  'post-signup': (kit) => kit.page('post-signup', `POST /signup for ${SIGNUP_EMAIL}: the account (once) and a mail in the outbox`, {
    form: { firstname: 'Sam', lastname: 'Sample', email: SIGNUP_EMAIL, password: 'a sample pass phrase', gender: '0' },
  }),
  'get-confirm-email': async (kit) => kit.page('get-confirm-email', 'GET /confirm-email with a live link: the confirm button', {
    query: { token: await kit.link('confirm-email', kit.confirmed) },
  }),
  // The confirmed demo user's link: confirming again changes nothing in the demo data.
  'post-confirm-email': async (kit) => kit.page('post-confirm-email', 'POST /confirm-email with a live link of the confirmed demo user', {
    form: { token: await kit.link('confirm-email', kit.confirmed) },
  }),
  'post-resend-confirmation': async (kit) => kit.page('post-resend-confirmation', 'POST /confirm-email/resend as the unconfirmed demo user: a mail in the outbox', {
    form: {}, cookies: [await kit.session(kit.unconfirmed)],
  }),
  'get-password-reset': (kit) => kit.page('get-password-reset', 'GET /password-reset: the form'),
  'post-password-reset': (kit) => kit.page('post-password-reset', 'POST /password-reset for the confirmed demo user: a mail in the outbox', {
    form: { email: kit.confirmed.email },
  }),
  'get-new-password': async (kit) => kit.page('get-new-password', 'GET /password-reset/confirm with a live link: the new-password form', {
    query: { token: await kit.link('reset-password', kit.confirmed) },
  }),
  // A live link would change a demo password: a used-up one gets the page's refusal instead.
  'post-new-password': (kit) => kit.page('post-new-password', 'POST /password-reset/confirm with a used-up link: the expired-link page (400)', {
    form: { token: randomToken(), password: 'a sample pass phrase' },
  }),
  'get-account': async (kit) => kit.page('get-account', 'GET /account, signed in', { cookies: [await kit.session()] }),
  'post-revoke-app': async (kit) => kit.page('post-revoke-app', 'POST /account/apps/{client_id}/revoke, signed in: the demo user’s grant to the demo application ends', {
    pathParameters: { client_id: kit.facts.demoClient.clientId }, form: {}, cookies: [await kit.session()],
  }),
  'get-outbox': (kit) => kit.page('get-outbox', 'GET /outbox: the local e-mail'),
  'get-developer': async (kit) => kit.page('get-developer', 'GET /developer, signed in: the demo user’s applications', { cookies: [await kit.session()] }),
  'post-register-app': async (kit) => kit.page('post-register-app', 'POST /developer/apps, signed in: registers an application, then to the page that shows its secret once', {
    form: { name: 'Sample application', description: 'Registered by npm run invoke.', website: 'https://app.example', redirect_uris: 'https://app.example/callback' },
    cookies: [await kit.session()],
  }),
  'get-app': async (kit) => kit.page('get-app', 'GET /developer/apps/{client_id}: the demo application, signed in as its developer', {
    pathParameters: { client_id: kit.facts.demoClient.clientId }, cookies: [await kit.session()],
  }),
  'post-update-app': async (kit) => kit.page('post-update-app', 'POST /developer/apps/{client_id}: the demo application saved with its current registration', {
    pathParameters: { client_id: kit.facts.demoClient.clientId }, form: await kit.demoClientRegistration(), cookies: [await kit.session()],
  }),
  // The demo application's secret is in the running example app: a scratch application's changes instead.
  'post-rotate-secret': async (kit) => kit.page('post-rotate-secret', 'POST /developer/apps/{client_id}/secret, confirmed, on a scratch application: to the page of its new secret', {
    pathParameters: { client_id: await kit.scratchApp() }, form: { confirm: 'yes' }, cookies: [await kit.session()],
  }),
  'get-app-secret': async (kit) => {
    const { clientId, cookie } = await kit.scratchAppWithSecretToShow();
    return kit.page('get-app-secret', 'GET /developer/apps/{client_id}/secret after registering a scratch application: its secret, shown once', {
      pathParameters: { client_id: clientId }, cookies: [await kit.session(), cookie],
    });
  },
  'post-retire-secret': async (kit) => kit.page('post-retire-secret', 'POST /developer/apps/{client_id}/secret/retire on a scratch application', {
    pathParameters: { client_id: await kit.scratchApp() }, form: {}, cookies: [await kit.session()],
  }),
  'get-delete-app': async (kit) => kit.page('get-delete-app', 'GET /developer/apps/{client_id}/delete: the confirmation asked before deleting a scratch application', {
    pathParameters: { client_id: await kit.scratchApp() }, cookies: [await kit.session()],
  }),
  'post-delete-app': async (kit) => kit.page('post-delete-app', 'POST /developer/apps/{client_id}/delete on a scratch application, its name typed', {
    pathParameters: { client_id: await kit.scratchApp() }, form: { confirm_name: SCRATCH_APP_NAME }, cookies: [await kit.session()],
  }),
  // Webhook forms act on a scratch application with a webhook of its own (a public address never called: nothing is delivered).
  'post-webhook': async (kit) => kit.page('post-webhook', 'POST /developer/apps/{client_id}/webhook on a scratch application: registers its webhook, then to the page that shows the signing secret once', {
    pathParameters: { client_id: await kit.scratchApp({ webhook: false }) }, form: { webhook_url: SAMPLE_WEBHOOK_URL }, cookies: [await kit.session()],
  }),
  'post-rotate-webhook-secret': async (kit) => kit.page('post-rotate-webhook-secret', 'POST /developer/apps/{client_id}/webhook/secret, confirmed, on a scratch application with a webhook: to the page of its new signing secret', {
    pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: { confirm: 'yes' }, cookies: [await kit.session()],
  }),
  'post-delete-webhook': async (kit) => kit.page('post-delete-webhook', 'POST /developer/apps/{client_id}/webhook/delete, confirmed, on a scratch application with a webhook', {
    pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: { confirm: 'yes' }, cookies: [await kit.session()],
  }),
  'post-send-test-event': async (kit) => kit.page('post-send-test-event', 'POST /developer/apps/{client_id}/webhook/test on a scratch application with a webhook: a webhook.test delivery queued', {
    pathParameters: { client_id: await kit.scratchApp({ webhook: true }) }, form: {}, cookies: [await kit.session()],
  }),
  'post-redeliver-event': async (kit) => {
    const clientId = await kit.scratchApp({ webhook: true });
    return kit.page('post-redeliver-event', 'POST /developer/apps/{client_id}/webhook/deliveries/{webhook_id}: "send again" of a scratch application\'s test delivery', {
      pathParameters: { client_id: clientId, webhook_id: await kit.scratchDelivery(clientId) }, form: {}, cookies: [await kit.session()],
    });
  },
  'http-fallback': (kit) => kit.page('http-fallback', 'DELETE /user (the resource API\'s fallback route DELETE /user): 405 with Allow', { route: { method: 'DELETE', path: '/user' }, method: 'DELETE' }),
};

const SIGNUP_EMAIL = 'sample.signup@example.com';
const SCRATCH_APP_NAME = 'Scratch application (npm run invoke)';
/** A public address as an IPv6 literal (example.com's), so the URL check passes without DNS; the samples deliver nothing there. */
const SAMPLE_WEBHOOK_URL = 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/webhooks';
const CODE_VERIFIER = 'sample-code-verifier-for-npm-run-invoke-0123456789';

type DemoUser = ServiceFacts['users'][number];

interface RequestSpec {
  /** The route template; default: the function's first route. */
  route?: { method: HttpMethod | 'ANY'; path: string };
  /** The request's method when the route is `ANY`. */
  method?: HttpMethod;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  cookies?: string[];
  headers?: Record<string, string>;
  /** A form-encoded body; it gets the sample's CSRF field, matching its CSRF cookie. */
  form?: Record<string, string>;
  json?: unknown;
}

/** What the samples are made of: the demo users, a session, a link, a scratch application, the event. */
class SampleKit {
  readonly confirmed: DemoUser;
  readonly unconfirmed: DemoUser;
  private readonly csrf = randomToken();

  constructor(readonly facts: ServiceFacts, private readonly doc: DynamoDBDocumentClient, private readonly undo: (() => Promise<unknown>)[]) {
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
  async session(user: DemoUser = this.confirmed): Promise<string> {
    const sessions = createSessionRepo(this.table);
    const id = await sessions.createSession(user.id);
    this.undo.push(() => sessions.deleteSession(id));
    return `session=${encodeURIComponent(id)}`;
  }

  /** A live e-mailed link of the user, removed after the call if still unused; its token. */
  async link(purpose: LinkPurpose, user: DemoUser): Promise<string> {
    const token = await createLinkRepo(this.table).createLink(purpose, user.id);
    this.undo.push(() => this.doc.send(new DeleteCommand({ TableName: this.facts.tableName, Key: linkKey(hashSecret(token)) })));
    return token;
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
  api(fn: FunctionName, description: string, json?: unknown): Sample {
    const device = this.confirmed.devices[0] ?? '';
    const route = routeOf(fn);
    return {
      description,
      event: this.event(fn, {
        ...(route.path.includes('{device_id}') ? { pathParameters: { device_id: device } } : {}),
        ...(json === undefined ? {} : { json }),
      }),
    };
  }

  /** Any other request: a page, a form, or a public JSON endpoint. */
  page(fn: FunctionName, description: string, spec: RequestSpec = {}): Sample {
    return { description, event: this.event(fn, spec) };
  }

  private event(fn: FunctionName, spec: RequestSpec): APIGatewayProxyEventV2 {
    const route = spec.route ? { ...routeOf(fn), ...spec.route } : routeOf(fn);
    const method = spec.method ?? (route.method as HttpMethod);
    const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(spec.pathParameters?.[name] ?? ''));
    const host = new URL(route.api === 'resource' ? this.facts.apiUrl : this.facts.authUrl).host;
    const query = new URLSearchParams(spec.query ?? {}).toString();
    const cookies = [...(spec.cookies ?? []), ...(spec.form ? [`csrf=${this.csrf}`] : [])];
    const headers: Record<string, string> = { host, 'user-agent': 'npm-run-invoke', ...spec.headers };
    let body: string | undefined;
    if (spec.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams({ ...spec.form, csrf: this.csrf }).toString();
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
