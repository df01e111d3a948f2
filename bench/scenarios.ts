import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  BatchGetCommand, DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand,
} from '#shared/data/commands';
import type { APIGatewayProxyEventV2, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import type { DocumentClient } from '#shared/data/document-client';
import { formCsrfToken } from '#shared/http/csrf';
import { newSecretReveal } from '#shared/console/developer';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import { hashPassword } from '#shared/accounts/password';
import { hashSecret, randomToken } from '#shared/secrets';
import { grantTokenNames, newAuthorizationCode, newDeviceCode, newGrantToken } from '#shared/oauth/grant-tokens';
import { DEVICE_CODE_GRANT_TYPE } from '#shared/oauth/grants/device-code';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createClientRepo } from '#shared/data/client-repo';
import { createDeviceGrantRepo } from '#shared/data/device-grant-repo';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createClaimRepo } from '#shared/data/claim-repo';
import { createSerialRepo } from '#shared/data/serial-repo';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { createKnownBrowserRepo } from '#shared/data/known-browser-repo';
import { KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_TTL_SECONDS } from '#shared/accounts/login-throttle';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createLinkRepo, type LinkPurpose } from '#shared/data/link-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import { createSigningKeyRepo } from '#shared/data/signing-key-repo';
import { createUserRepo } from '#shared/data/user-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import {
  clientKey, deviceKey, devicesSeenByClientRange, familyKey, consentKey, sessionKey, userKey,
} from '#shared/data/item-keys';
import type { Device } from '#shared/domain/device';
import { REVOKED_GRANT_SECONDS } from '#shared/domain/grant';
import { newUserCode } from '#shared/domain/device-authorization';
import { formatClaimCode, newClaimCode } from '#shared/domain/claim-code';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { formatTimestamp } from '#shared/domain/time';
import type { User } from '#shared/domain/user';
import { doc as runtimeDoc } from '#shared/runtime';
import { newWebhookId } from '#shared/domain/webhook';
import { webhookEvent } from '#shared/webhooks/events';
import { sampleEvent } from '#local/sample-events';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import { endpointOf, FUNCTIONS, ROUTES, type FunctionName } from '#functions/registry';
import { ROOT } from './bundle.ts';
import { basicAuth, formBody, FORM_TYPE, makeEvent, sqsEvent, streamModifyEvent } from './events.ts';
import { shadowScenarios } from './shadow-scenarios.ts';
import { step, type FloorStep } from '#shared/bench-floor';
import { BENCH_WEBHOOK_ADDRESS } from './floors.ts';
import type { WebhookEnds } from './webhook-ends.ts';
import { initSigningKeys } from '#shared/keys/rotation';
import { newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpStep } from '#shared/accounts/totp';
import { sealWith } from '#shared/oauth/sealing';
import { PENDING_SIGN_IN_COOKIE } from '#shared/pages/second-factor';
import { RECOVERY_KEY_COOKIE } from '#shared/pages/security';
import { SoftwarePasskey } from '../test/support/software-passkey.ts';

// One realistic, successful call per function (two for the token endpoint), with the bare DynamoDB
// requests of the same kinds it is compared with, and its floor: the fewest DynamoDB requests (and
// mandated steps) its design allows. Everything a call consumes (codes, refresh tokens, sessions,
// links, applications, webhook deliveries) is created beforehand through the repositories, on a
// separate client, so that preparation is neither timed nor counted. A function without an HTTP
// route gets the event its trigger sends (a stream batch, an SQS batch, the scheduled input).

/** An API Gateway event, or the event of a function without an HTTP route (stream batch, SQS batch, scheduled input). */
export type BenchEvent = APIGatewayProxyEventV2 | DynamoDBStreamEvent | SQSEvent | Record<string, unknown>;
/** An HTTP answer, or the result of a function without an HTTP route. */
export type HandlerResult = { statusCode?: number; body?: string; headers?: Record<string, string> } & Record<string, unknown>;
export type Handler = (event: BenchEvent, context: unknown) => Promise<HandlerResult>;

export interface Scenario {
  /** Row label: the function name, with the case in parentheses when a function has several. */
  name: string;
  fn: FunctionName;
  /** Status every call must answer with; anything else stops the benchmark (it would measure an error path). */
  expectStatus?: number;
  /**
   * For a function without an HTTP route (its result has no status): members every result must have,
   * each equal to the one given (compared as JSON); anything else stops the benchmark.
   */
  expectResult?: Record<string, unknown>;
  /**
   * Run after the cold starts, which served `runs` of this scenario's events: throws when they did
   * not all take the scenario's path, where the result alone cannot tell (a delivery dropped or made).
   */
  afterColdStarts?(runs: number): void;
  /**
   * The fewest steps the design allows, in order: DynamoDB requests of the kinds it needs (their
   * count is the minimum of requests per call), plus scrypt or a fixed wait where the design mandates
   * one. The function's cold start is divided by the floor's (first scenario of the function).
   * Undefined: not analysed.
   */
  floor?: FloorStep[];
  /** Why the floor is what it is. */
  minReason: string;
  /** Budget on DynamoDB requests per call, where one is set. */
  requestBudget?: number;
  /** `count` events, each good for one call. */
  events(count: number): Promise<BenchEvent[]>;
  /** `count` bare calls of the same DynamoDB request kinds, on the function's own client and table. */
  bare?: { label: string; prepare(count: number): Promise<(() => Promise<unknown>)[]> };
}

export interface ScenarioEnv {
  endpoint: string;
  table: string;
  /** AUTH_ISSUER: the auth host, where the browser pages live. */
  authUrl: string;
  /** API_AUDIENCE: the resource API's host; default https://api.example.com. */
  apiUrl?: string;
  /** LOCAL_SIGNING_KEY_FILE: the key the functions sign with, which the signing-key schedule names. */
  keyFile: string;
  /** The webhook receiver on loopback (bench/webhook-ends.ts), to which webhook deliveries go. */
  webhookEnds: Pick<WebhookEnds, 'receiverOrigin' | 'received'>;
}

/** Why `result` is not the answer `scenario` must get; undefined when it is. */
export function unexpectedAnswer(scenario: Pick<Scenario, 'expectStatus' | 'expectResult'>, result: HandlerResult | undefined): string | undefined {
  if (scenario.expectStatus !== undefined && result?.statusCode !== scenario.expectStatus) {
    return `answered ${result?.statusCode}, expected ${scenario.expectStatus}: ${String(result?.body ?? '').slice(0, 300)}`;
  }
  for (const [member, value] of Object.entries(scenario.expectResult ?? {})) {
    if (JSON.stringify(result?.[member]) !== JSON.stringify(value)) {
      return `answered ${JSON.stringify(result)?.slice(0, 300)}, expected ${member} to be ${JSON.stringify(value)}`;
    }
  }
  return undefined;
}

const alice = DEMO_USERS[0].user;
const aliceDevice = DEMO_USERS[0].devices[0].id;
const CALLBACK = DEMO_CLIENT.redirectUris[0];
/** The grant generation of every consent the benchmark records (see Consent.grantGeneration). */
const BENCH_GENERATION = 'bench-grant-generation';

/**
 * The DynamoDB client every function sends through (shared/runtime.ts); a client a handler module
 * made for itself would be counted from its creation (bench/run.ts).
 */
export const RUNTIME_CLIENTS: readonly DocumentClient[] = [runtimeDoc];

export async function loadHandler(fn: FunctionName): Promise<Handler> {
  const module = (await import(resolve(ROOT, endpointOf(fn).entry))) as { handler: Handler };
  return module.handler;
}

/** Runs `task` for 0..count-1 with at most `limit` in flight. */
async function pool<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i);
    }
  }));
  return out;
}

const repeat = <T>(count: number, make: () => T): T[] => Array.from({ length: count }, make);

/** What the token endpoint's floors hold that its warm calls do not read. */
const TOKEN_CACHED = 'the signing-key schedule is read once per instance (cached a minute; the function reads it alongside the BatchGetItem, '
  + 'the floor before it) and the client item once per 5 s (client-cache.ts): both in the cold start\'s floor, not in a warm call\'s reads';

const BENCH_PASSWORD = 'bench account password 1';
/** The path of the webhook subscription's URL on the loopback receiver (its floor posts to another). */
const RECEIVER_PATH = '/hook';
/** A public address as an IP literal: the webhook forms check it without DNS; the bench delivers nothing. */
const BENCH_WEBHOOK_URL = `https://[${BENCH_WEBHOOK_ADDRESS}]/webhooks`;
/** A valid registration, as stored and as the developer form sends it. */
const APP_FORM_VALUES = {
  name: 'Weather Station', description: 'Shows the temperature your devices report.', website: 'https://weather.example.com',
  redirectUris: ['https://weather.example.com/callback', 'http://localhost:3000/callback'],
};
const APP_FORM = {
  name: APP_FORM_VALUES.name, description: APP_FORM_VALUES.description, website: APP_FORM_VALUES.website,
  redirect_uris: APP_FORM_VALUES.redirectUris.join('\n'),
};

/** The scenarios, and a `close` that releases the preparation client. */
export function createScenarios(env: ScenarioEnv): { scenarios: Scenario[]; close(): void } {
  const { table } = env;
  // Waits up to 30 s per request: a timed-out conditional put retried by the SDK would fail on its own first write.
  const setupDoc = createDocumentClient({ endpoint: env.endpoint, limits: { requestTimeoutMs: 30_000 } });
  const deps = { doc: setupDoc, table };
  const users = createUserRepo(deps);
  const clients = createClientRepo(deps);
  const grants = createGrantRepo(deps);
  const deviceGrants = createDeviceGrantRepo(deps);
  const sessions = createSessionRepo(deps);
  const links = createLinkRepo(deps);
  const webhooks = createWebhookRepo(deps);
  const authHost = new URL(env.authUrl).host;
  const scopes = [...ALL_SCOPES];

  const resourceEvent = (fn: FunctionName, extra: { pathParameters?: Record<string, string>; body?: string; headers?: Record<string, string> } = {}) => {
    const route = ROUTES.find((r) => r.fn === fn && r.api === 'resource')!;
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => extra.pathParameters?.[name] ?? '');
    return makeEvent({
      routeKey: `${route.method} ${route.path}`, path, ...extra,
      claims: { sub: alice.id, client_id: DEMO_CLIENT.clientId, scope: (route.scopes ?? []).join(' ') },
    });
  };
  /**
   * A browser request to the auth host; `route` is the route table's path, `{name}` filled from
   * pathParameters. A form's `csrf` field becomes the token its cookies call for (bound to the
   * session when there is one, as the page would have printed it).
   */
  const authEvent = (method: string, route: string, extra: {
    query?: Record<string, string>; form?: Record<string, string>; headers?: Record<string, string>; cookies?: string[]; pathParameters?: Record<string, string>;
    sourceIp?: string;
  } = {}) => {
    if (extra.form?.csrf !== undefined) extra = { ...extra, form: { ...extra.form, csrf: formCsrfToken(extra.cookies) ?? extra.form.csrf } };
    return makeEvent({
      routeKey: `${method} ${route}`, method, host: authHost, query: extra.query, cookies: extra.cookies, pathParameters: extra.pathParameters,
      sourceIp: extra.sourceIp,
      path: route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(extra.pathParameters?.[name] ?? '')),
      ...(extra.form ? { body: formBody(extra.form), headers: { ...FORM_TYPE, ...extra.headers } } : { headers: extra.headers }),
    });
  };

  /**
   * A user's consent to an application, under the benchmark's one grant generation: a code is
   * redeemed and a token rotated only while it stands (see Consent.grantGeneration).
   */
  const consentOf = (userId: string, clientId: string) =>
    grants.saveConsent({ userId, clientId, scopes, grantedAt: formatTimestamp(new Date()), grantGeneration: BENCH_GENERATION });
  /** Fresh, unused authorization codes for the demo client (one PutItem each). */
  const freshCodes = async (count: number) => {
    await consentOf(alice.id, DEMO_CLIENT.clientId);
    return pool(count, 16, async () => {
      const { code, stored } = newAuthorizationCode({
        clientId: DEMO_CLIENT.clientId, userId: alice.id, redirectUri: CALLBACK, scopes,
        expiresAt: Math.floor(Date.now() / 1000) + 3600, grantGeneration: BENCH_GENERATION,
      });
      await grants.createCode(stored);
      return code;
    });
  };
  /** An active refresh token in a family of its own (a code redeemed through the repository). */
  const activeFamily = async (clientId: string, userId: string) => {
    await consentOf(userId, clientId);
    const { stored } = newAuthorizationCode({
      clientId, userId, redirectUri: CALLBACK, scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600, grantGeneration: BENCH_GENERATION,
    });
    await grants.createCode(stored);
    const token = newGrantToken(userId, stored.familyId);
    await grants.redeemCode(stored.familyId, stored.codeHash, hashSecret(token), new Date());
    return { token, tokenHash: hashSecret(token), familyId: stored.familyId };
  };
  /** Fresh, active refresh tokens of Alice for the demo client. */
  const freshRefreshTokens = (count: number) => pool(count, 16, () => activeFamily(DEMO_CLIENT.clientId, alice.id));

  /** A TV application (public, device flow on), registered once. */
  const tvApp = (() => {
    let made: Promise<string> | undefined;
    return () => (made ??= (async () => {
      const clientId = `bench-tv-${randomUUID()}`;
      await clients.createClient({
        clientId, clientType: 'public', deviceFlow: true, name: 'Bench TV', description: '', website: 'https://tv.example', redirectUris: [],
        developerId: alice.id, developerName: 'Bench', createdAt: formatTimestamp(new Date()),
      });
      return clientId;
    })());
  })();
  /** Fresh device authorizations of the TV application, waiting for their user (one transaction each); their device codes. */
  const freshDeviceCodes = async (count: number) => {
    const clientId = await tvApp();
    return pool(count, 16, async () => {
      const { familyId, deviceCode } = newDeviceCode();
      const userCode = newUserCode();
      await deviceGrants.createDeviceAuthorization({
        familyId, clientId, scopes, status: 'device_pending', deviceCodeHash: hashSecret(deviceCode), confidential: false,
        intervalMs: 5000, expiresAt: Math.floor(Date.now() / 1000) + 3600,
      }, hashSecret(userCode));
      return { clientId, deviceCode, familyId, userCode };
    });
  };

  /** A promise made on first use and shared afterwards. */
  const once = <T>(make: () => Promise<T>) => {
    let made: Promise<T> | undefined;
    return () => (made ??= make());
  };
  /**
   * Bench accounts besides the demo users, so that no scenario changes what another one reads:
   * Dana registers, deletes and revokes applications (her partitions grow and shrink; Alice's, read
   * by the account and developer pages, stay as they are); the newcomer gets the e-mailed links
   * (confirming her address touches nobody else). The resend, reset request and new-password pages
   * use accounts of their own per call (`freshAccounts`).
   */
  const benchUser = (firstname: string, lastname: string, emailConfirmed: boolean) => once(async () => {
    const id = randomUUID();
    const stamp = formatTimestamp(new Date());
    const user: User = {
      id, firstname, lastname, avatar_url: `/avatars/${id}.png`, gender: 0, email: `${firstname.toLowerCase()}.bench@example.com`,
      email_confirmed: emailConfirmed, creation_date: stamp, update_date: stamp,
    };
    await users.createUser(user, await hashPassword(BENCH_PASSWORD));
    return user;
  });
  const dana = benchUser('Dana', 'Petit', true);
  const newcomer = benchUser('Nora', 'Bernard', false);
  const fay = benchUser('Fay', 'Moreau', true);

  const sessionOf = (userId: () => Promise<{ id: string }>) => once(async () => sessions.createSession((await userId()).id));
  const aliceSession = sessionOf(async () => alice);
  const danaSession = sessionOf(dana);
  const csrf = randomToken();
  /** Cookies of a signed-in browser that has loaded a form (session and CSRF). */
  const signedIn = async (session: () => Promise<string>) => [`session=${await session()}`, `csrf=${csrf}`];

  /** Registers an application of `developer` through the repository; returns its client id. */
  const createApp = async (developer: Pick<User, 'id' | 'firstname' | 'lastname'>) => {
    const clientId = randomUUID();
    await clients.createClient({
      ...APP_FORM_VALUES, clientId, secretHash: hashSecret(randomToken()), developerId: developer.id,
      developerName: `${developer.firstname} ${developer.lastname}`, createdAt: formatTimestamp(new Date()),
    });
    return clientId;
  };
  /** Alice's second application (the demo client serves the OAuth scenarios; its secret must not change). */
  const aliceApp = once(() => createApp(alice));
  /**
   * The webhook pipeline's subscriber: Fay, owning one device, who authorized one application (her
   * own, so that no page lists it) whose webhook is the loopback receiver's RECEIVER_PATH. Her
   * device's item, as the table's stream shows it.
   */
  const subscriber = once(async () => {
    const user = await fay();
    const device: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date()) };
    await createDeviceRepo(deps).createDevice(user.id, device);
    const { Item } = await setupDoc.send(new GetCommand({ TableName: table, Key: deviceKey(user.id, device.id), ConsistentRead: true }));
    const clientId = await createApp(user);
    await consentOf(user.id, clientId);
    await webhooks.setUrl(clientId, `${env.webhookEnds.receiverOrigin}${RECEIVER_PATH}`);
    return { userId: user.id, clientId, deviceItem: Item! };
  });
  /**
   * The signing-key schedule, as the table holds it in AWS from the deployment on (its deployment
   * step, initSigningKeys): the deployed key alone (the local key file) with its public key, so that
   * what the token endpoint signs and the JWKS publishes does not change; they read this item at a
   * cold start instead of finding none, as their floors always assumed.
   */
  const keySchedule = once(async () => {
    const repo = createSigningKeyRepo(deps);
    if (await repo.getSchedule(true)) return;
    await initSigningKeys({ repo, store: createLocalKeyStore(env.keyFile) });
  });
  /** `count` fresh single-use links of the newcomer. */
  const freshLinks = async (purpose: LinkPurpose, count: number) => {
    const { id } = await newcomer();
    return pool(count, 16, () => links.createLink(purpose, id));
  };
  /** The bench password's hash, computed once for the accounts below. */
  const benchPasswordHash = once(() => hashPassword(BENCH_PASSWORD));
  /**
   * `count` accounts of their own, for calls that each need a fresh account: a used reset link ends
   * the account's other links, and an address gets at most MAIL_LIMIT_PER_WINDOW account e-mails an hour.
   */
  const freshAccounts = async (count: number, emailConfirmed: boolean) => {
    const hash = await benchPasswordHash();
    return pool(count, 16, async () => {
      const id = randomUUID();
      const stamp = formatTimestamp(new Date());
      const user: User = {
        id, firstname: 'Bench', lastname: 'Account', avatar_url: `/avatars/${id}.png`, gender: 0, email: `bench-${id}@example.com`,
        email_confirmed: emailConfirmed, creation_date: stamp, update_date: stamp,
      };
      await users.createUser(user, hash);
      return user;
    });
  };
  /** `count` fresh reset links, each of an account of its own. */
  const freshResetLinks = async (count: number) => {
    const accounts = await freshAccounts(count, true);
    return pool(count, 16, (i) => links.createLink('reset-password', accounts[i]!.id));
  };

  // Strong sign-in. Challenges, pending sign-ins and recovery codes waiting to be shown live minutes
  // (5 to 10), but the cold starts run long after their events are prepared (all functions' events
  // first, then every cold start: most of an hour in a full run). So those items are prepared as if
  // made at `later()`, three hours on: the same items, live when the calls come. Sessions made for a
  // change that asks for a recent sign-in (a passkey's removal) are dated the same way.
  const factors = createFactorRepo(deps);
  const passkeyStore = createPasskeyRepo(deps);
  const knownBrowserStore = createKnownBrowserRepo(deps);
  const later = () => new Date(Date.now() + 3 * 3600_000);
  const rp = { id: new URL(env.authUrl).hostname, origin: new URL(env.authUrl).origin };
  /**
   * An authenticator app enrolled through the repository, as a right first code enrols it: its 10
   * recovery codes and the key of their one showing. `enrolledAccounts`: `count` accounts so
   * enrolled, each with a session.
   */
  const enrol = async (userId: string) => {
    const at = later();
    const secret = newTotpSecret();
    const codes = newRecoveryCodes();
    const revealKey = randomToken();
    await factors.startTotpEnrolment(userId, secret, at);
    const enrolled = await factors.enrolTotp({
      userId, secret, step: totpStep(at.getTime()), recoveryCodeHashes: codes.map((c) => recoveryCodeHash(userId, c)),
      sealedCodes: sealWith(revealKey, codes.join('\n')), now: at,
    });
    if (!enrolled) throw new Error('bench: an enrolment was refused');
    return { codes, revealKey };
  };
  const enrolledAccounts = async (count: number) => {
    const accounts = await freshAccounts(count, true);
    return pool(count, 16, async (i) => {
      const user = accounts[i]!;
      return { user, ...(await enrol(user.id)), session: await sessions.createSession(user.id) };
    });
  };
  /** `count` accounts, each with one passkey (made in this process: test/support/software-passkey.ts). */
  const passkeyAccounts = async (count: number) => {
    const accounts = await freshAccounts(count, true);
    return pool(count, 16, async (i) => {
      const user = accounts[i]!;
      const passkey = new SoftwarePasskey(user.id);
      if (await passkeyStore.addPasskey(user.id, passkey.stored('Work laptop')) !== 'added') throw new Error('bench: a passkey was refused');
      return { user, passkey };
    });
  };
  /**
   * Gil, whose security page the benchmark reads: an authenticator app, two passkeys and two
   * browsers signed in. Nothing the other scenarios do touches his account.
   */
  const gil = benchUser('Gil', 'Laurent', true);
  /** Hugo, whose other browsers the benchmark signs out (each call makes one for it). */
  const hugo = benchUser('Hugo', 'Girard', true);
  const hugoSession = sessionOf(hugo);
  const gilSession = once(async () => {
    const user = await gil();
    await enrol(user.id);
    for (const name of ['Work laptop', 'Phone']) await passkeyStore.addPasskey(user.id, new SoftwarePasskey(user.id).stored(name));
    await sessions.createSession(user.id);
    return sessions.createSession(user.id);
  });

  // The bare request kinds, written as the repositories send them.
  const bareGetItem = (Key: Record<string, string>, doc: DocumentClient) => () => doc.send(new GetCommand({ TableName: table, Key }));
  const batchGetWithClient = (doc: DocumentClient, key: Record<string, string>) => doc.send(new BatchGetCommand({
    RequestItems: { [table]: { Keys: [key, clientKey(DEMO_CLIENT.clientId)], ConsistentRead: true } },
  }));

  const readAuthorize = { client_id: DEMO_CLIENT.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read_user read_device', state: 'af0ifjsldkj' };

  const list: Scenario[] = [
    {
      name: 'get-user', fn: 'get-user', expectStatus: 200, floor: [step.get('user')], requestBudget: 1,
      minReason: 'GetItem of the profile',
      events: async (n) => repeat(n, () => resourceEvent('get-user')),
      bare: { label: 'GetItem', prepare: async (n) => repeat(n, () => bareGetItem(userKey(alice.id), runtimeDoc)) },
    },
    {
      // The application's consent is read with the devices (its device choice): one item more in the same Query.
      name: 'list-devices', fn: 'list-devices', expectStatus: 200, floor: [step.query('device', DEMO_USERS[0].devices.length + 1)], requestBudget: 1,
      minReason: 'Query of the owner partition, from the application\'s consent (its device choice) through the devices',
      events: async (n) => {
        await consentOf(alice.id, DEMO_CLIENT.clientId);
        return repeat(n, () => resourceEvent('list-devices'));
      },
      bare: {
        label: 'Query',
        prepare: async (n) => repeat(n, () => () => {
          const range = devicesSeenByClientRange(alice.id, DEMO_CLIENT.clientId);
          return runtimeDoc.send(new QueryCommand({
            TableName: table, KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': range.pk, ':from': range.from, ':to': range.to },
          }));
        }),
      },
    },
    {
      name: 'get-device', fn: 'get-device', expectStatus: 200, floor: [step.batchGet('device', 'consent')], requestBudget: 1,
      minReason: 'BatchGetItem of the device under the owner key and the application\'s consent (its device choice)',
      events: async (n) => {
        await consentOf(alice.id, DEMO_CLIENT.clientId);
        return repeat(n, () => resourceEvent('get-device', { pathParameters: { device_id: aliceDevice } }));
      },
      bare: {
        label: 'BatchGetItem',
        prepare: async (n) => repeat(n, () => () => runtimeDoc.send(new BatchGetCommand({
          RequestItems: { [table]: { Keys: [deviceKey(alice.id, aliceDevice), consentKey(alice.id, DEMO_CLIENT.clientId)], ConsistentRead: true } },
        }))),
      },
    },
    {
      name: 'update-device', fn: 'update-device', expectStatus: 204, floor: [step.transact('consent', 'device')], requestBudget: 1,
      minReason: 'TransactWriteItems: the application\'s consent checked (its device choice shares the device) and the conditional update under the owner key',
      events: async (n) => repeat(n, () => resourceEvent('update-device', {
        pathParameters: { device_id: aliceDevice },
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Living room', active: false }),
      })),
      bare: {
        label: 'UpdateItem',
        prepare: async (n) => repeat(n, () => () => runtimeDoc.send(new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: table, Key: consentKey(alice.id, DEMO_CLIENT.clientId),
                ConditionExpression: 'attribute_not_exists(pk) OR ((attribute_not_exists(onlyDevices) OR contains(onlyDevices, :device)) '
                  + 'AND (attribute_not_exists(exceptDevices) OR NOT contains(exceptDevices, :device)))',
                ExpressionAttributeValues: { ':device': aliceDevice },
              },
            },
            {
              Update: {
                TableName: table, Key: deviceKey(alice.id, aliceDevice),
                // With the device's event sequence (`ADD seq`, for device.updated webhooks), as the handler sends it.
                UpdateExpression: 'SET #f0 = :v0, #f1 = :v1 ADD seq :one', ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#f0': 'name', '#f1': 'active' }, ExpressionAttributeValues: { ':v0': 'Living room', ':v1': false, ':one': 1 },
              },
            },
          ],
        }))),
      },
    },
    {
      name: 'post-token (refresh)', fn: 'post-token', expectStatus: 200, requestBudget: 2,
      floor: [step.get('keySchedule'), step.batchGet('family', 'client', 'consent'), step.update('family'), step.sign()],
      minReason: 'BatchGetItem(family, client, consent) + UpdateItem(family: still active with the presented token current, now naming the successor) + the access token\'s RS256 signature; '
        + TOKEN_CACHED,
      events: async (n) => (await freshRefreshTokens(n)).map(({ token }) => authEvent('POST', '/oauth/token', {
        headers: { authorization: basicAuth(DEMO_CLIENT.clientId, DEMO_CLIENT.clientSecret) },
        form: { grant_type: 'refresh_token', refresh_token: token },
      })),
      bare: {
        label: 'BatchGetItem+UpdateItem',
        prepare: async (n) => (await freshRefreshTokens(n)).map(({ tokenHash, familyId }) => async () => {
          await runtimeDoc.send(new BatchGetCommand({
            // The client is cached by the instance (client-cache.ts): a warm call reads the family and the consent.
            RequestItems: { [table]: { Keys: [familyKey(familyId), consentKey(alice.id, DEMO_CLIENT.clientId)], ConsistentRead: true } },
          }));
          await runtimeDoc.send(new UpdateCommand({
            TableName: table, Key: familyKey(familyId),
            UpdateExpression: 'SET activeTokenHash = :next, previousTokenHash = :presented, rotatedAt = :at, sealedSuccessor = :sealed',
            ConditionExpression: '#status = :active AND activeTokenHash = :presented', ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':active': 'active', ':presented': tokenHash, ':next': hashSecret(randomToken()), ':at': Date.now(), ':sealed': randomToken() },
          }));
        }),
      },
    },
    {
      name: 'post-token (code)', fn: 'post-token', expectStatus: 200, requestBudget: 2,
      floor: [step.get('keySchedule'), step.batchGet('code', 'client', 'consent'), step.update('code'), step.sign()],
      minReason: 'BatchGetItem(code, client, consent) + UpdateItem(code, still pending, becomes its family with its first token\'s hash) + the access token\'s RS256 signature; '
        + TOKEN_CACHED,
      events: async (n) => (await freshCodes(n)).map((code) => authEvent('POST', '/oauth/token', {
        form: { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret },
      })),
      bare: {
        label: 'BatchGetItem+UpdateItem',
        prepare: async (n) => (await freshCodes(n)).map((code) => async () => {
          const { familyId } = grantTokenNames(code)!;
          await runtimeDoc.send(new BatchGetCommand({
            RequestItems: { [table]: { Keys: [familyKey(familyId), consentKey(alice.id, DEMO_CLIENT.clientId)], ConsistentRead: true } },
          }));
          await runtimeDoc.send(new UpdateCommand({
            TableName: table, Key: familyKey(familyId),
            UpdateExpression: 'SET #status = :active, activeTokenHash = :token, createdAt = :at REMOVE expiresAt, redirectUri, codeChallenge',
            ConditionExpression: '#status = :pending AND codeHash = :code AND expiresAt > :now', ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':active': 'active', ':pending': 'pending', ':token': hashSecret(randomToken()), ':code': hashSecret(code),
              ':at': formatTimestamp(new Date()), ':now': Math.floor(Date.now() / 1000),
            },
          }));
        }),
      },
    },
    {
      name: 'post-token (device poll)', fn: 'post-token', expectStatus: 400, requestBudget: 1,
      floor: [step.get('keySchedule'), step.update('code')],
      minReason: 'UpdateItem(device authorization: this client\'s code, unexpired, its interval waited; records the poll and answers the item, '
        + 'here still waiting for its user: authorization_pending); a public client is not read (the item is bound to it); '
        + 'the signing-key schedule is read once per instance (cached a minute), in the cold start\'s floor',
      events: async (n) => (await freshDeviceCodes(n)).map(({ clientId, deviceCode }) => authEvent('POST', '/oauth/token', {
        form: { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId },
      })),
      bare: {
        label: 'UpdateItem',
        prepare: async (n) => (await freshDeviceCodes(n)).map(({ clientId, deviceCode, familyId }) => async () => {
          const now = Date.now();
          await runtimeDoc.send(new UpdateCommand({
            TableName: table, Key: familyKey(familyId),
            UpdateExpression: 'SET nextPollAt = intervalMs + :now',
            ConditionExpression: 'deviceCodeHash = :hash AND clientId = :client AND expiresAt > :nowSeconds AND confidential = :confidential '
              + 'AND (attribute_not_exists(nextPollAt) OR nextPollAt <= :onTime)',
            ExpressionAttributeValues: {
              ':now': now, ':hash': hashSecret(deviceCode), ':client': clientId, ':nowSeconds': Math.floor(now / 1000), ':confidential': false, ':onTime': now + 1000,
            },
            ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }));
        }),
      },
    },
    {
      name: 'post-device-authorization', fn: 'post-device-authorization', expectStatus: 200,
      floor: [step.batchGet('client'), step.transact('code', 'code')],
      minReason: 'BatchGetItem(client: its type and device-flow setting) + TransactWriteItems(the device authorization and its user code, each new)',
      events: async (n) => {
        const clientId = await tvApp();
        return repeat(n, () => authEvent('POST', '/oauth/device_authorization', { form: { client_id: clientId, scope: 'read_device' } }));
      },
    },
    {
      name: 'post-device-page (allow)', fn: 'post-device-page', expectStatus: 200,
      floor: [
        step.batchGet('session', 'user'), step.transact('throttle', 'throttle'), step.get('code'), step.batchGet('client', 'consent'), step.query('device', 0),
        step.transact('code', 'family', 'consent'),
      ],
      minReason: 'BatchGetItem(session, user) + TransactWriteItems(the entry counted per account and per address, before any lookup) + GetItem(user code) '
        + '+ BatchGetItem(client, consent) + Query(the user\'s devices, for the choice; none here) + TransactWriteItems(user code used up, authorization approved, consent recorded)',
      events: async (n) => {
        const [accounts, codes] = await Promise.all([freshAccounts(n, true), freshDeviceCodes(n)]);
        const cookies = await pool(n, 16, (i) => sessions.createSession(accounts[i]!.id));
        // Each from an address of its own: the entry limit counts per address too.
        return codes.map(({ userCode }, i) => authEvent('POST', '/device', {
          cookies: [`session=${cookies[i]}`, `csrf=${csrf}`], form: { csrf, user_code: userCode, decision: 'allow' },
          sourceIp: `2001:db8::${(i + 1).toString(16)}`,
        }));
      },
    },
    {
      name: 'post-revoke', fn: 'post-revoke', expectStatus: 200, floor: [step.batchGet('family', 'client'), step.update('family')],
      minReason: 'BatchGetItem(family, client) + UpdateItem(family revoked, with a TTL: no token is stored apart from it)',
      events: async (n) => (await freshRefreshTokens(n)).map(({ token }) => authEvent('POST', '/oauth/revoke', {
        headers: { authorization: basicAuth(DEMO_CLIENT.clientId, DEMO_CLIENT.clientSecret) },
        form: { token, token_type_hint: 'refresh_token' },
      })),
      bare: {
        label: 'BatchGetItem+UpdateItem',
        prepare: async (n) => (await freshRefreshTokens(n)).map(({ familyId }) => async () => {
          await batchGetWithClient(runtimeDoc, familyKey(familyId));
          await runtimeDoc.send(new UpdateCommand({
            TableName: table, Key: familyKey(familyId), UpdateExpression: 'SET #status = :revoked, expiresAt = if_not_exists(expiresAt, :expires)',
            ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':revoked': 'revoked', ':expires': Math.floor(Date.now() / 1000) + REVOKED_GRANT_SECONDS },
          }));
        }),
      },
    },
    {
      name: 'get-authorize', fn: 'get-authorize', expectStatus: 302, floor: [step.batchGet('client', 'session', 'user', 'consent'), step.put('code')],
      minReason: 'signed in, consent covers the scopes: BatchGetItem(client, session, user, consent) + PutItem(code)',
      events: async (n) => {
        const session = await aliceSession();
        await consentOf(alice.id, DEMO_CLIENT.clientId);
        return repeat(n, () => authEvent('GET', '/oauth/authorize', { query: readAuthorize, cookies: [`session=${session}`] }));
      },
    },
    {
      name: 'post-authorize', fn: 'post-authorize', expectStatus: 303,
      floor: [step.batchGet('client', 'session', 'user', 'consent'), step.query('device', DEMO_USERS[0].devices.length), step.transact('consent', 'code')],
      minReason: 'consent allowed: BatchGetItem(client, session, user, consent) + Query(the user\'s devices: the choice names only their own) '
        + '+ TransactWriteItems(consent ADD scopes, code)',
      events: async (n) => {
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/oauth/authorize', { cookies, form: { ...readAuthorize, csrf, decision: 'allow' } }));
      },
    },
    {
      name: 'post-login', fn: 'post-login', expectStatus: 303,
      floor: [
        step.batchGet('email', 'throttle', 'throttle', 'throttle', 'knownBrowser'), step.update('knownBrowser'), step.get('user'), step.scrypt(),
        step.transact('session', 'knownBrowser', 'knownBrowser', 'user'),
      ],
      minReason: 'a browser that signed in to the account before (its known-browser cookie, each call its own), the common case: '
        + 'BatchGetItem(e-mail item, throttle per account and address, per account, per address, known browser) + UpdateItem(one failure '
        + 'reserved on the known browser, before the check: concurrent attempts buy no extra guesses) + GetItem(user, for the password hash) + scrypt verification (by '
        + 'design) + TransactWriteItems(session, the new known browser, the old one forgotten, the user\'s last sign-in). A new browser '
        + 'reserves on the three records in a transaction instead, and its owner gets a sign-in alert',
      events: async (n) => pool(n, 16, async () => {
        const known = knownBrowserStore.newKnownBrowser(alice.id, KNOWN_BROWSER_TTL_SECONDS, Date.now());
        await setupDoc.send(new TransactWriteCommand({ TransactItems: [known.item] }));
        return authEvent('POST', '/login', {
          cookies: [`csrf=${csrf}`, `${KNOWN_BROWSER_COOKIE}=${known.token}`],
          form: { email: alice.email, password: DEMO_USERS[0].password, csrf, return_to: '/account' },
        });
      }),
    },
    {
      name: 'get-second-factor', fn: 'get-second-factor', expectStatus: 200, floor: [step.batchGet('pendingSignIn', 'user')],
      minReason: 'a password was right, no session cookie: BatchGetItem(the pending sign-in and its user, whose address the code form names)',
      events: async (n) => {
        const pending = await factors.startPendingSignIn(alice.id, new Date());
        return repeat(n, () => authEvent('GET', '/login/second-factor', { query: { return_to: '/account' }, cookies: [`${PENDING_SIGN_IN_COOKIE}=${pending}`] }));
      },
    },
    {
      name: 'post-second-factor (recovery code)', fn: 'post-second-factor', expectStatus: 303,
      floor: [
        step.batchGet('pendingSignIn', 'totp', 'recoveryCodes', 'throttle', 'user'), step.update('throttle'),
        step.transact('session', 'pendingSignIn', 'recoveryCodes', 'throttle', 'knownBrowser', 'user'),
      ],
      minReason: 'each call an account of its own, with a recovery code (an app\'s code depends on the moment of the call), on a browser '
        + 'without a known-browser cookie: BatchGetItem(pending sign-in, the factors, the second-factor throttle record, user: the cookie '
        + 'names the user) + UpdateItem(one failure reserved, before the check) + TransactWriteItems(session, the pending sign-in '
        + 'ended, the code spent, the reservation given back, known browser, the user\'s last sign-in). No alert: a first sign-in',
      events: async (n) => {
        const accounts = await enrolledAccounts(n);
        return pool(n, 16, async (i) => {
          const { user, codes } = accounts[i]!;
          const pending = await factors.startPendingSignIn(user.id, later());
          return authEvent('POST', '/login/second-factor', {
            cookies: [`${PENDING_SIGN_IN_COOKIE}=${pending}`, `csrf=${csrf}`], form: { csrf, code: codes[0]!, return_to: '/account' },
          });
        });
      },
    },
    {
      name: 'post-passkey-login', fn: 'post-passkey-login', expectStatus: 303,
      floor: [
        step.batchGet('throttle', 'passkey', 'user'), step.update('throttle'), step.delete('challenge'), step.passkeyCheck('get'),
        step.transact('session', 'passkey', 'throttle', 'knownBrowser', 'user'),
      ],
      minReason: 'each call an account of its own, on a browser without a known-browser cookie: BatchGetItem(the address\'s throttle '
        + 'record, the passkey and the user: the answer names both) + UpdateItem(one failure reserved, before the check) + '
        + 'DeleteItem(the challenge, single use) + the signature verified (the WebAuthn library, loaded on first use) + '
        + 'TransactWriteItems(session, the passkey\'s counter, the reservation given back, known browser, the user\'s last sign-in). No alert: a first sign-in',
      events: async (n) => {
        const accounts = await passkeyAccounts(n);
        return pool(n, 16, async (i) => {
          const challenge = randomToken();
          await passkeyStore.createChallenge(challenge, 'authenticate', undefined, later());
          return authEvent('POST', '/login/passkey', {
            cookies: [`csrf=${csrf}`], form: { csrf, response: accounts[i]!.passkey.answer(challenge, rp.origin, rp.id), return_to: '/account' },
          });
        });
      },
    },
    {
      name: 'post-logout', fn: 'post-logout', expectStatus: 303, floor: [step.delete('session')],
      minReason: 'DeleteItem of the session',
      events: async (n) => (await pool(n, 16, () => sessions.createSession(alice.id))).map((session) =>
        authEvent('POST', '/logout', { cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf } })),
      bare: {
        label: 'DeleteItem',
        prepare: async (n) => (await pool(n, 16, () => sessions.createSession(alice.id))).map((session) => () =>
          runtimeDoc.send(new DeleteCommand({ TableName: table, Key: sessionKey(hashSecret(session)) }))),
      },
    },
    {
      name: 'post-signup', fn: 'post-signup', expectStatus: 303,
      floor: [step.zxcvbn(), step.scrypt(), step.transact('user', 'email', 'link'), step.update('mailLimit'), step.mail()],
      minReason: 'strength estimate of the new password (zxcvbn and its dictionaries, by design) + scrypt hash of it (by design) + '
        + 'TransactWriteItems(user, e-mail item, confirmation link) + UpdateItem(the address\'s mail count) + the confirmation e-mail (locally a file in the outbox, in AWS an SES request)',
      events: async (n) => repeat(n, () => authEvent('POST', '/signup', {
        cookies: [`csrf=${csrf}`],
        form: { csrf, firstname: 'Camille', lastname: 'Roux', gender: '0', email: `camille.${randomUUID()}@example.com`, password: 'a long enough password 7' },
      })),
    },
    {
      name: 'post-confirm-email', fn: 'post-confirm-email', expectStatus: 303, floor: [step.get('link'), step.transact('link', 'user')],
      minReason: 'GetItem(link: the token names neither the user nor the purpose) + TransactWriteItems(use the link, confirm the user)',
      events: async (n) => (await freshLinks('confirm-email', n)).map((token) =>
        authEvent('POST', '/confirm-email', { cookies: [`csrf=${csrf}`], form: { csrf, token } })),
    },
    {
      name: 'post-resend-confirmation', fn: 'post-resend-confirmation', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.update('mailLimit'), step.put('link'), step.mail()],
      minReason: 'signed in, unconfirmed: BatchGetItem(session, user) + UpdateItem(the address\'s mail count) + PutItem(link) + '
        + 'the e-mail (locally a file in the outbox, in AWS an SES request). Each call as an account of its own, below its address\'s mail limit',
      events: async (n) => pool(n, 16, async () => {
        const [user] = await freshAccounts(1, false);
        const cookies = [`session=${await sessions.createSession(user!.id)}`, `csrf=${csrf}`];
        return authEvent('POST', '/confirm-email/resend', { cookies, form: { csrf } });
      }),
    },
    {
      name: 'post-password-reset', fn: 'post-password-reset', expectStatus: 303,
      floor: [step.wait(750), step.update('mailLimit'), step.get('email'), step.get('user'), step.put('link'), step.mail()],
      minReason: 'known address: UpdateItem(the address\'s mail count, taken for any address) + GetItem(e-mail item, which holds only the user id) '
        + '+ GetItem(user: the mail greets them by first name) + PutItem(link) + the e-mail, answered no sooner than 750 ms after the request '
        + '(by design: known and unknown addresses take the same time). Each call for an account of its own, below its mail limit',
      events: async (n) => (await freshAccounts(n, true)).map((user) =>
        authEvent('POST', '/password-reset', { cookies: [`csrf=${csrf}`], form: { csrf, email: user.email } })),
    },
    {
      name: 'post-new-password', fn: 'post-new-password', expectStatus: 303,
      floor: [step.get('link'), step.get('user'), step.zxcvbn(), step.scrypt(), step.query('session', 0, 'gsi1'), step.transact('link', 'user')],
      minReason: 'GetItem(link: gives the user id) + GetItem(user: the policy judges the password against the address and names) + '
        + 'strength estimate (zxcvbn and its dictionaries, by design) + scrypt hash (by design) + Query(gsi1: the user\'s sessions, none here) + TransactWriteItems(use the link, set the '
        + 'hash, delete the sessions found): four, since each read needs what the previous one returned',
      // Each link of an account of its own: using one ends the account's other reset links.
      events: async (n) => (await freshResetLinks(n)).map((token) => authEvent('POST', '/password-reset/confirm', {
        cookies: [`csrf=${csrf}`], form: { csrf, token, password: 'a brand new password 9' },
      })),
    },
    {
      name: 'get-account', fn: 'get-account', expectStatus: 200,
      floor: [step.batchGet('session', 'user'), step.query('consent', 1), step.batchGet('client')],
      minReason: 'signed in, one authorized app: BatchGetItem(session, user) + Query(consents) + BatchGetItem(clients of those consents)',
      events: async (n) => {
        await consentOf(alice.id, DEMO_CLIENT.clientId);
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('GET', '/account', { cookies }));
      },
    },
    {
      name: 'post-revoke-app', fn: 'post-revoke-app', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.delete('consent'), step.query('family', 1, 'gsi1'), step.transact('family')],
      minReason: 'BatchGetItem(session, user) + DeleteItem(the consent: its grant generation ends first) + '
        + 'Query(gsi1: the user\'s token families of the app, one here) + TransactWriteItems(revoke the families: status and TTL)',
      events: async (n) => {
        const user = await hugo();
        const cookies = await signedIn(hugoSession);
        const apps = await pool(n, 16, async () => {
          const clientId = await createApp(user);
          await activeFamily(clientId, user.id);
          return clientId;
        });
        return apps.map((clientId) => authEvent('POST', '/account/apps/{client_id}/revoke', { cookies, pathParameters: { client_id: clientId }, form: { csrf } }));
      },
    },
    {
      name: 'get-grant', fn: 'get-grant', expectStatus: 200,
      floor: [step.batchGet('session', 'user', 'client', 'consent'), step.query('device', 0), step.query('family', 1, 'gsi1')],
      minReason: 'BatchGetItem(session, user, client, consent) + Query(the user\'s devices, none here) alongside Query(gsi1: the grant\'s families, for its last use)',
      events: async (n) => {
        const users = await freshAccounts(n, true);
        const cookies = await pool(n, 16, async (i) => {
          await activeFamily(DEMO_CLIENT.clientId, users[i]!.id);
          return sessions.createSession(users[i]!.id);
        });
        return cookies.map((cookie) => authEvent('GET', '/account/apps/{client_id}', {
          cookies: [`session=${cookie}`, `csrf=${csrf}`], pathParameters: { client_id: DEMO_CLIENT.clientId },
        }));
      },
    },
    {
      name: 'post-update-grant', fn: 'post-update-grant', expectStatus: 303,
      floor: [step.batchGet('session', 'user', 'client', 'consent'), step.query('device', 0), step.put('consent')],
      minReason: 'BatchGetItem(session, user, client, consent) + Query(the user\'s devices: the choice names only their own; none here) '
        + '+ PutItem(the consent, on condition of its generation and revision)',
      events: async (n) => {
        const users = await freshAccounts(n, true);
        const cookies = await pool(n, 16, async (i) => {
          await consentOf(users[i]!.id, DEMO_CLIENT.clientId);
          return sessions.createSession(users[i]!.id);
        });
        return cookies.map((cookie) => authEvent('POST', '/account/apps/{client_id}', {
          cookies: [`session=${cookie}`, `csrf=${csrf}`], pathParameters: { client_id: DEMO_CLIENT.clientId },
          form: { csrf, revision: '0', scope_read_device: 'on', choose_devices: '1' },
        }));
      },
    },
    {
      name: 'get-delete-account', fn: 'get-delete-account', expectStatus: 200,
      floor: [step.batchGet('session', 'user'), step.query('client', 0, 'gsi1')],
      minReason: 'signed in, an account that develops no application: BatchGetItem(session, user) + Query(gsi1: the applications it develops, '
        + 'each of which another user could be using: one Query more per application)',
      events: async (n) => {
        const [user] = await freshAccounts(1, true);
        const cookies = await signedIn(sessionOf(async () => user!));
        return repeat(n, () => authEvent('GET', '/account/delete', { cookies }));
      },
    },
    {
      name: 'post-export-account', fn: 'post-export-account', expectStatus: 200,
      floor: [
        step.batchGet('session', 'user'), step.query('device', 0), step.query('consent', 0), step.query('device', 0), step.query('session', 1, 'gsi1'),
        step.query('client', 0, 'gsi1'), step.get('mailLimit'),
      ],
      minReason: 'signed in, an account with nothing but its session: BatchGetItem(session, user) + Query(devices) + Query(consents) + '
        + 'Query(second factors, none here: a Query of 0 items like the devices\') + '
        + 'Query(gsi1: sessions) + Query(gsi1: applications developed) + GetItem(this hour\'s mail count), all but the first at once; with authorizations or '
        + 'applications, one Query per authorization (its token families) and one BatchGetItem of their names and webhooks',
      events: async (n) => {
        const [user] = await freshAccounts(1, true);
        const cookies = await signedIn(sessionOf(async () => user!));
        return repeat(n, () => authEvent('POST', '/account/export', { cookies, form: { csrf, account: user!.id } }));
      },
    },
    {
      name: 'post-delete-account', fn: 'post-delete-account', expectStatus: 303,
      floor: [
        step.batchGet('session', 'user'), step.batchGet('throttle', 'throttle', 'throttle'), step.transact('throttle', 'throttle', 'throttle'),
        step.get('user'), step.scrypt(), step.transact('throttle', 'throttle', 'throttle'),
        step.get('user'), step.query('client', 0, 'gsi1'), step.update('user'), step.query('consent', 0), step.query('client', 0, 'gsi1'),
        step.query('device', 0), step.query('device', 0), step.delete('email'), step.mail(), step.update('user'), step.query('session', 1, 'gsi1'), step.delete('session'),
        step.delete('user'),
      ],
      minReason: 'an account with nothing but its session, each call its own: BatchGetItem(session, user) + the password asked again in the login '
        + 'throttle (BatchGetItem of the 3 records, TransactWriteItems reserving a failure, GetItem of the hash, scrypt, TransactWriteItems giving it back) '
        + '+ GetItem(profile) + Query(gsi1: applications, none used by others) + UpdateItem(the deletion marker) + Query(consents) + '
        + 'Query(gsi1: applications, again after the marker) + Query(devices) + Query(second factors, none here: a Query of 0 items like the devices\') '
        + '+ DeleteItem(address) + the farewell e-mail + UpdateItem(mailed) + '
        + 'Query(gsi1: sessions) + DeleteItem(session) + DeleteItem(profile)',
      events: async (n) => pool(n, 16, async () => {
        const [user] = await freshAccounts(1, true);
        // Signed in "later": a deletion asks for a sign-in within 10 minutes, and the cold starts come long after this.
        const session = await sessions.createSession(user!.id, later());
        return authEvent('POST', '/account/delete', {
          cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf, account: user!.id, password: BENCH_PASSWORD },
        });
      }),
    },
    {
      name: 'get-security', fn: 'get-security', expectStatus: 200,
      floor: [step.batchGet('session', 'user', 'totp', 'recoveryCodes'), step.query('passkey', 2), step.query('session', 2, 'gsi1')],
      minReason: 'an authenticator app, two passkeys, two browsers: BatchGetItem(session, user, and the factors: the session cookie names '
        + 'the user) + Query(the passkeys) and Query(gsi1: the sessions), the two at once',
      events: async (n) => {
        const cookies = await signedIn(gilSession);
        return repeat(n, () => authEvent('GET', '/account/security', { cookies }));
      },
    },
    {
      name: 'get-totp-setup (new enrolment)', fn: 'get-totp-setup', expectStatus: 200,
      floor: [step.batchGet('session', 'user', 'totp', 'recoveryCodes', 'totpEnrolment'), step.put('totpEnrolment'), step.qrCode()],
      minReason: 'a first visit, each call an account of its own: BatchGetItem(session, user, and the factors and any enrolment waiting) + '
        + 'PutItem(the new enrolment: its secret waits 15 minutes for the first code) + the QR code drawn (the design shows one)',
      events: async (n) => {
        const accounts = await freshAccounts(n, true);
        return pool(n, 16, async (i) => authEvent('GET', '/account/security/totp', {
          cookies: [`session=${await sessions.createSession(accounts[i]!.id)}`, `csrf=${csrf}`],
        }));
      },
    },
    {
      // A right first code depends on the moment of the call, which a cold start's prepared event cannot know: the page's
      // answer to a mistyped code is measured (the right code's transaction is counted in test/e2e/request-counts.test.ts).
      name: 'post-confirm-totp (wrong code)', fn: 'post-confirm-totp', expectStatus: 400,
      floor: [step.batchGet('session', 'user', 'totpEnrolment'), step.qrCode()],
      minReason: 'an enrolment waiting, a code that is not its: BatchGetItem(session, user, and the enrolment) + the QR code drawn again; nothing written',
      events: async (n) => {
        const [user] = await freshAccounts(1, true);
        await factors.startTotpEnrolment(user!.id, newTotpSecret(), later());
        const cookies = [`session=${await sessions.createSession(user!.id)}`, `csrf=${csrf}`];
        return repeat(n, () => authEvent('POST', '/account/security/totp', { cookies, form: { csrf, code: '000000' } }));
      },
    },
    {
      name: 'get-recovery-codes', fn: 'get-recovery-codes', expectStatus: 200,
      floor: [step.batchGet('session', 'user'), step.delete('recoveryReveal')],
      minReason: 'right after an enrolment, each call an account of its own: BatchGetItem(session, user) + DeleteItem(the sealed codes, '
        + 'returned: shown once) and the codes unsealed with the browser\'s key',
      events: async (n) => (await enrolledAccounts(n)).map(({ session, revealKey }) => authEvent('GET', '/account/security/recovery-codes', {
        cookies: [`session=${session}`, `csrf=${csrf}`, `${RECOVERY_KEY_COOKIE}=${revealKey}`],
      })),
    },
    {
      name: 'post-new-recovery-codes', fn: 'post-new-recovery-codes', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.transact('recoveryCodes', 'recoveryReveal')],
      minReason: 'two-step sign-in on, signed in just now: BatchGetItem(session, user) + TransactWriteItems(the app checked still on, '
        + 'the new codes\' hashes in place of the old, the codes sealed for their one showing)',
      events: async (n) => (await enrolledAccounts(n)).map(({ session }) => authEvent('POST', '/account/security/recovery-codes', {
        cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf },
      })),
    },
    {
      name: 'post-remove-totp (recovery code)', fn: 'post-remove-totp', expectStatus: 303,
      floor: [step.batchGet('session', 'user', 'totp', 'recoveryCodes', 'throttle'), step.update('throttle'), step.transact('totp', 'recoveryCodes', 'user')],
      minReason: 'each call an account of its own, with a recovery code (an app\'s code depends on the moment of the call): '
        + 'BatchGetItem(session, user, the factors and the second-factor throttle record) + UpdateItem(one failure reserved '
        + 'on the record, before the check) + TransactWriteItems(the app and the codes deleted, the code spent by the condition, the user\'s flag off)',
      events: async (n) => (await enrolledAccounts(n)).map(({ session, codes }) => authEvent('POST', '/account/security/totp/remove', {
        cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf, code: codes[0]! },
      })),
    },
    {
      name: 'post-passkey-registration-options', fn: 'post-passkey-registration-options', expectStatus: 200,
      floor: [step.batchGet('session', 'user'), step.query('passkey', 2), step.put('challenge')],
      minReason: 'two passkeys already: BatchGetItem(session, user) + Query(the passkeys, which the options exclude) and PutItem(the challenge)',
      events: async (n) => {
        const cookies = await signedIn(gilSession);
        return repeat(n, () => authEvent('POST', '/account/security/passkeys/options', { cookies, form: { csrf } }));
      },
    },
    {
      name: 'post-add-passkey', fn: 'post-add-passkey', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.delete('challenge'), step.passkeyCheck('create'), step.transact('passkey', 'passkeyClaim', 'user')],
      minReason: 'each call an account of its own, with its registration\'s challenge: BatchGetItem(session, user) + DeleteItem(the challenge, '
        + 'single use) + the answer verified (the WebAuthn library, loaded on first use) + TransactWriteItems(passkey, claim of its credential id, the user\'s count)',
      events: async (n) => {
        const accounts = await freshAccounts(n, true);
        return pool(n, 16, async (i) => {
          const user = accounts[i]!;
          const challenge = randomToken();
          await passkeyStore.createChallenge(challenge, 'register', user.id, later());
          return authEvent('POST', '/account/security/passkeys', {
            cookies: [`session=${await sessions.createSession(user.id)}`, `csrf=${csrf}`],
            form: { csrf, name: 'Work laptop', response: new SoftwarePasskey(user.id).registration(challenge, rp.origin, rp.id) },
          });
        });
      },
    },
    {
      name: 'post-remove-passkey', fn: 'post-remove-passkey', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.transact('passkey', 'passkeyClaim', 'user')],
      minReason: 'a recent sign-in, each call an account of its own: BatchGetItem(session, user) + TransactWriteItems(passkey, claim, the user\'s count)',
      events: async (n) => {
        const accounts = await passkeyAccounts(n);
        return pool(n, 16, async (i) => {
          const { user, passkey } = accounts[i]!;
          // Signed in "later": a removal asks for a sign-in within 10 minutes, and the cold starts come long after this.
          const session = await sessions.createSession(user.id, later());
          return authEvent('POST', '/account/security/passkeys/{passkey_id}/remove', {
            cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf }, pathParameters: { passkey_id: hashSecret(passkey.credentialId) },
          });
        });
      },
    },
    {
      name: 'post-end-session', fn: 'post-end-session', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.delete('session')],
      minReason: 'BatchGetItem(session, user) + DeleteItem(the other browser\'s session, on condition it is the user\'s)',
      events: async (n) => {
        const user = await hugo();
        const cookies = await signedIn(hugoSession);
        return pool(n, 16, async () => authEvent('POST', '/account/security/sessions/{session_id}/end', {
          cookies, form: { csrf }, pathParameters: { session_id: hashSecret(await sessions.createSession(user.id)) },
        }));
      },
    },
    {
      name: 'post-end-other-sessions', fn: 'post-end-other-sessions', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.query('session', 3, 'gsi1'), step.delete('session'), step.delete('session')],
      minReason: 'each call an account of its own, signed in on three browsers: BatchGetItem(session, user) + Query(gsi1: the sessions\' keys) '
        + '+ DeleteItem of each other browser\'s session (two here)',
      events: async (n) => {
        const accounts = await freshAccounts(n, true);
        return pool(n, 16, async (i) => {
          const user = accounts[i]!;
          const [session] = await Promise.all([0, 1, 2].map(() => sessions.createSession(user.id)));
          return authEvent('POST', '/account/security/sessions/end-others', { cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf } });
        });
      },
    },
    {
      name: 'get-developer', fn: 'get-developer', expectStatus: 200, floor: [step.batchGet('session', 'user'), step.query('client', 2, 'gsi1')],
      minReason: 'BatchGetItem(session, user) + Query(gsi1: the developer\'s applications, two here)',
      events: async (n) => {
        await aliceApp();
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('GET', '/developer', { cookies }));
      },
    },
    {
      name: 'post-register-app', fn: 'post-register-app', expectStatus: 303, floor: [step.batchGet('session', 'user'), step.transact('client', 'reveal')],
      minReason: 'BatchGetItem(session, user) + TransactWriteItems(client, its secret to show once)',
      events: async (n) => {
        const cookies = await signedIn(danaSession);
        return repeat(n, () => authEvent('POST', '/developer/apps', { cookies, form: { csrf, ...APP_FORM } }));
      },
    },
    {
      name: 'get-app', fn: 'get-app', expectStatus: 200, floor: [step.batchGet('session', 'user', 'client', 'webhook'), step.query('delivery', 20)],
      minReason: 'BatchGetItem(session, user, client, webhook subscription) + Query(its last 20 deliveries)',
      events: async (n) => {
        const pathParameters = { client_id: await aliceApp() };
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('GET', '/developer/apps/{client_id}', { cookies, pathParameters }));
      },
    },
    {
      name: 'post-update-app', fn: 'post-update-app', expectStatus: 303, floor: [step.batchGet('session', 'user', 'client'), step.update('client')],
      minReason: 'BatchGetItem(session, user, client) + UpdateItem(client, conditioned on the developer)',
      events: async (n) => {
        const pathParameters = { client_id: await aliceApp() };
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/developer/apps/{client_id}', { cookies, pathParameters, form: { csrf, ...APP_FORM } }));
      },
    },
    {
      name: 'post-rotate-secret', fn: 'post-rotate-secret', expectStatus: 303, floor: [step.batchGet('session', 'user', 'client'), step.transact('client', 'reveal')],
      minReason: 'BatchGetItem(session, user, client) + TransactWriteItems(client: the new secret hash, the previous one kept; the secret to show once)',
      events: async (n) => {
        const pathParameters = { client_id: await aliceApp() };
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/developer/apps/{client_id}/secret', { cookies, pathParameters, form: { csrf, confirm: 'yes' } }));
      },
    },
    {
      name: 'get-app-secret', fn: 'get-app-secret', expectStatus: 200, floor: [step.batchGet('session', 'user', 'client'), step.delete('reveal')],
      minReason: 'BatchGetItem(session, user, client) + DeleteItem(the secret to show, returning it)',
      events: async (n) => {
        const clientId = await aliceApp();
        const cookies = await signedIn(aliceSession);
        // Each event shows a secret of its own, rotated in through the repository.
        const keys = await pool(n, 16, async () => {
          const secret = randomToken();
          const { reveal, cookie } = newSecretReveal({ clientId, developerId: alice.id }, secret, 'rotated', new Date(), true);
          await clients.rotateSecret(alice.id, clientId, hashSecret(secret), formatTimestamp(new Date()), reveal);
          return cookie.split(';')[0]!;
        });
        return keys.map((key) => authEvent('GET', '/developer/apps/{client_id}/secret', { cookies: [...cookies, key], pathParameters: { client_id: clientId } }));
      },
    },
    {
      name: 'post-retire-secret', fn: 'post-retire-secret', expectStatus: 303, floor: [step.batchGet('session', 'user', 'client'), step.update('client')],
      minReason: 'BatchGetItem(session, user, client) + UpdateItem(client: the previous secret removed, conditioned on the developer)',
      events: async (n) => {
        const pathParameters = { client_id: await aliceApp() };
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/developer/apps/{client_id}/secret/retire', { cookies, pathParameters, form: { csrf } }));
      },
    },
    {
      name: 'post-delete-app', fn: 'post-delete-app', expectStatus: 303,
      floor: [step.batchGet('session', 'user', 'client'), step.query('family', 1, 'gsi1'), step.transact('client', 'family')],
      minReason: 'BatchGetItem(session, user, client) + Query(gsi1: the app\'s token families and consents, one family here) + '
        + 'TransactWriteItems(delete the client, revoke the families with their TTL, delete the consents): one transaction up to 100 items (its webhook subscription included)',
      events: async (n) => {
        const user = await hugo();
        const cookies = await signedIn(hugoSession);
        const apps = await pool(n, 16, async () => {
          const clientId = await createApp(user);
          await activeFamily(clientId, user.id);
          return clientId;
        });
        return apps.map((clientId) => authEvent('POST', '/developer/apps/{client_id}/delete', {
          cookies, pathParameters: { client_id: clientId }, form: { csrf, confirm_name: APP_FORM_VALUES.name },
        }));
      },
    },
    {
      name: 'post-webhook', fn: 'post-webhook', expectStatus: 303, floor: [step.batchGet('session', 'user', 'client', 'webhook'), step.addressCheck(), step.update('webhook')],
      minReason: 'BatchGetItem(session, user, client, webhook subscription) + the check that the URL\'s address is public (an IP literal: no DNS) '
        + '+ UpdateItem(webhook: the URL changed, secrets kept)',
      events: async (n) => {
        const clientId = await aliceApp();
        await webhooks.setUrl(clientId, BENCH_WEBHOOK_URL);
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/developer/apps/{client_id}/webhook', { cookies, pathParameters: { client_id: clientId }, form: { csrf, webhook_url: BENCH_WEBHOOK_URL } }));
      },
    },
    {
      name: 'post-rotate-webhook-secret', fn: 'post-rotate-webhook-secret', expectStatus: 303,
      floor: [step.batchGet('session', 'user', 'client', 'webhook'), step.get('webhook'), step.update('webhook'), step.put('reveal')],
      minReason: 'BatchGetItem(session, user, client, webhook) + GetItem and UpdateItem(webhook: the new secret first, the current one retiring in 24 h) + PutItem(the secret to show once)',
      events: async (n) => {
        const clientId = await aliceApp();
        await webhooks.setUrl(clientId, BENCH_WEBHOOK_URL);
        const cookies = await signedIn(aliceSession);
        return repeat(n, () => authEvent('POST', '/developer/apps/{client_id}/webhook/secret', { cookies, pathParameters: { client_id: clientId }, form: { csrf, confirm: 'yes' } }));
      },
    },
    // The two webhook forms that send to the delivery queue, on the path the bench can run: an
    // application without a webhook (the form's error page, 400). Their queued path adds an SQS
    // SendMessage, for which floors have no step (bench/webhooks.ts measures the pipeline); the
    // SQS client library they carry for it is in the floor.
    ...(['post-send-test-event', 'post-redeliver-event'] as const).map((fn) => ({
      name: `${fn} (no webhook)`, fn, expectStatus: 400, floor: [step.queueClient(), step.batchGet('session', 'user', 'client', 'webhook')],
      minReason: 'the SQS client library loaded (the function queues deliveries) + BatchGetItem(session, user, client, webhook): an application without a webhook, refused with the form',
      events: async (n: number) => {
        const cookies = await signedIn(aliceSession);
        const route = ROUTES.find((r) => r.fn === fn)!;
        // An application of Alice's of its own: the other console scenarios give hers a webhook.
        const clientId = randomUUID();
        await clients.createClient({ ...APP_FORM_VALUES, clientId, secretHash: hashSecret(randomToken()), developerId: alice.id, developerName: 'Alice', createdAt: formatTimestamp(new Date()), secretCreatedAt: formatTimestamp(new Date()) });
        const pathParameters = { client_id: clientId, webhook_id: 'msg_mjwq8ry8c_5a4b3c2d1e0f9a8b7c6d' };
        return repeat(n, () => authEvent('POST', route.path, { cookies, pathParameters, form: { csrf } }));
      },
    })),
    {
      name: 'post-delete-webhook', fn: 'post-delete-webhook', expectStatus: 303, floor: [step.batchGet('session', 'user', 'client', 'webhook'), step.delete('webhook')],
      minReason: 'BatchGetItem(session, user, client, webhook) + DeleteItem(webhook)',
      events: async (n) => {
        const cookies = await signedIn(aliceSession);
        // Each event removes a webhook of its own application.
        const clientIds = await pool(n, 16, async () => {
          const clientId = randomUUID();
          await clients.createClient({ ...APP_FORM_VALUES, clientId, secretHash: hashSecret(randomToken()), developerId: alice.id, developerName: 'Alice', createdAt: formatTimestamp(new Date()), secretCreatedAt: formatTimestamp(new Date()) });
          await webhooks.setUrl(clientId, BENCH_WEBHOOK_URL);
          return clientId;
        });
        return clientIds.map((clientId) => authEvent('POST', '/developer/apps/{client_id}/webhook/delete', { cookies, pathParameters: { client_id: clientId }, form: { csrf, confirm: 'yes' } }));
      },
    },
    // The functions without an HTTP route, each with the event its trigger sends.
    {
      // The operator's mode that changes nothing; the hourly `when-due` run makes the same read and,
      // between rotations, changes nothing either (in AWS it also points the two KMS aliases).
      name: 'rotate-signing-key (report)', fn: 'rotate-signing-key', expectResult: { mode: 'report', introduced: null, deleted: [] },
      floor: [step.kmsClient(), step.get('keySchedule')],
      minReason: 'GetItem(signing-key schedule, strongly consistent: a rotation writes over what it read) + the KMS client library, '
        + 'which the function carries whatever its mode (its other modes create, delete and name keys in KMS)',
      events: async (n) => {
        await keySchedule();
        return repeat(n, () => ({ mode: 'report' }));
      },
    },
    {
      name: 'fan-out-events (1 webhook)', fn: 'fan-out-events', expectResult: { queued: 1 },
      floor: [step.query('consent', 1), step.batchGet('webhook'), step.transact('delivery', 'consent'), step.queueSend()],
      minReason: 'a stream batch of one device update (away mode switched) of a user who authorized one application with a webhook: '
        + 'Query(the owner\'s consents) + BatchGetItem(the webhook subscriptions of those holding read_device) + TransactWriteItems(the delivery, '
        + 'kept 30 days for the console, and a ConditionCheck that the owner\'s consent still stands: no delivery naming a deleted user) + one SendMessageBatch to the delivery queue (the SQS client library and a client for it)',
      events: async (n) => {
        const { deviceItem } = await subscriber();
        const seq = Number(deviceItem.seq);
        return repeat(n, () => streamModifyEvent(deviceItem, { ...deviceItem, active: !deviceItem.active, seq: seq + 1 }));
      },
    },
    {
      name: 'record-presence (connected)', fn: 'record-presence', expectResult: { outcome: 'applied' }, requestBudget: 2,
      floor: [step.query('device', 1, 'gsi1'), step.update('device')],
      minReason: 'a connect lifecycle event of IoT Core naming a device by its id alone: Query(GSI1: the device\'s owner, whose '
        + 'partition holds the device) + UpdateItem(connected and last_connection, on condition that the event is newer than the last applied)',
      events: async (n) => {
        const user = await fay();
        // A device of its own per event: each connect is a device's first, so every call takes the applied path.
        return pool(n, 16, async () => {
          const device: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date(0)), connected: false };
          await createDeviceRepo(deps).createDevice(user.id, device);
          return {
            clientId: device.id, timestamp: Date.now(), eventType: 'connected', sessionIdentifier: randomUUID(),
            principalIdentifier: randomToken().slice(0, 64), ipAddress: '192.0.2.10', versionNumber: 1,
          };
        });
      },
    },
    {
      name: 'post-claim-device (claimed)', fn: 'post-claim-device', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.transact('throttle', 'throttle'), step.get('code'), step.get('device'), step.transact('code', 'device', 'device')],
      minReason: 'BatchGetItem(session, user) + TransactWriteItems(the entry counted per account and per address, before any lookup) + GetItem(claim code) '
        + '+ GetItem(the device that belongs to nobody) + TransactWriteItems(code used up, device moved into the owner\'s partition)',
      events: async (n) => {
        const accounts = await freshAccounts(n, true);
        const cookies = await pool(n, 16, (i) => sessions.createSession(accounts[i]!.id));
        const codes = await pool(n, 16, async () => {
          const code = newClaimCode();
          const device: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date(0)) };
          await createClaimRepo(deps).createUnclaimedDevice(device, hashSecret(code));
          return formatClaimCode(code);
        });
        // Each from an address of its own: the entry limit counts per address too.
        return codes.map((code, i) => authEvent('POST', '/account/devices/claim', {
          cookies: [`session=${cookies[i]}`, `csrf=${csrf}`], form: { csrf, claim_code: code }, sourceIp: `2001:db8::${(i + 1).toString(16)}`,
        }));
      },
    },
    {
      name: 'post-remove-device (removed)', fn: 'post-remove-device', expectStatus: 303,
      floor: [step.batchGet('session', 'user'), step.query('consent', 1), step.update('device'), step.transact('device', 'device')],
      minReason: 'BatchGetItem(session, user) + Query(the user\'s consents: who sees the device) + UpdateItem(the device marked with them) '
        + '+ TransactWriteItems(device moved out of the owner\'s partition to belong to nobody; none of the consents names it here)',
      events: async (n) => {
        const accounts = await freshAccounts(n, true);
        const cookies = await pool(n, 16, (i) => sessions.createSession(accounts[i]!.id));
        const ids = await pool(n, 16, async (i) => {
          const device: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date(0)) };
          await createDeviceRepo(deps).createDevice(accounts[i]!.id, device);
          await consentOf(accounts[i]!.id, DEMO_CLIENT.clientId);
          return device.id;
        });
        return ids.map((id, i) => authEvent('POST', '/account/devices/{device_id}/remove', {
          cookies: [`session=${cookies[i]}`, `csrf=${csrf}`], form: { csrf }, pathParameters: { device_id: id },
        }));
      },
    },
    {
      name: 'pre-provision-device (allowed)', fn: 'pre-provision-device', expectResult: { allowProvisioning: true }, requestBudget: 2,
      floor: [step.get('device'), step.transact('device', 'device')],
      minReason: 'fleet provisioning\'s pre-provisioning hook with a serial of the allow-list: GetItem(the serial, naming its device) + '
        + 'TransactWriteItems(the serial used up, the device\'s certificate recorded on the device that belongs to nobody)',
      events: async (n) => pool(n, 16, async () => {
        // A serial of its own per event, on the allow-list for a device that belongs to nobody: every call takes the allowed path.
        const device: Device = { ...DEMO_USERS[0].devices[0], id: randomUUID(), version: '2.4.1', last_connection: formatTimestamp(new Date(0)), connected: false };
        const serial = `SN-${randomUUID()}`;
        await createClaimRepo(deps).createUnclaimedDevice(device, hashSecret(randomToken()));
        await createSerialRepo(deps).allowSerial(serial, device.id);
        return {
          claimCertificateId: '0'.repeat(64), certificateId: randomBytes(32).toString('hex'),
          certificatePem: '', templateArn: 'arn:aws:iot:us-east-1:000000000000:provisioningtemplate/devices', clientId: 'factory', parameters: { SerialNumber: serial },
        };
      }),
    },
    {
      name: 'deliver-webhooks (delivered)', fn: 'deliver-webhooks', expectResult: { batchItemFailures: [] },
      floor: [step.queueClient(), step.batchGet('delivery', 'webhook', 'consent'), step.signedPost(), step.update('delivery')],
      minReason: 'an SQS batch of one message naming a pending device.updated delivery: BatchGetItem(delivery, webhook subscription, the '
        + 'owner\'s consent: the grant must still stand) + the payload signed (Standard Webhooks, HMAC-SHA256) and POSTed to the receiver, '
        + 'its answer read (here http on 127.0.0.1; in AWS https, after a DNS lookup and the address check) + UpdateItem(the attempt '
        + 'recorded on the delivery) + the SQS client library (a failed attempt sets its retry delay on the message)',
      events: async (n) => {
        const { userId, clientId, deviceItem } = await subscriber();
        return pool(n, 16, async () => {
          const at = new Date();
          const event = webhookEvent('device.updated', {
            user_id: userId, device_id: String(deviceItem.id), sequence: Number(deviceItem.seq) + 1, changes: { active: !deviceItem.active },
          }, at);
          const webhookId = newWebhookId(at);
          await webhooks.createDelivery({ clientId, webhookId, eventType: event.type, payload: JSON.stringify(event), userId }, at);
          return sqsEvent(JSON.stringify({ clientId, webhookId, userId }));
        });
      },
      afterColdStarts: (runs) => {
        const received = env.webhookEnds.received(RECEIVER_PATH);
        if (received !== runs) throw new Error(`the receiver got ${received} deliveries from the ${runs} cold starts of deliver-webhooks: not the delivered path`);
      },
    },
    ...shadowScenarios({ deps, user: fay, step, pool }),
  ];

  // A function without a scenario here gets its declaration's (functions/<area>/<name>.route.ts):
  // one fresh sample event per call (`sample`, as `npm run invoke` sends it, made on the preparation
  // client), the status the sample expects, and the floor its `bench` states (shared/bench-floor.ts).
  // Without `bench`, its row is marked "(generic)": no floor is known (its cold start is compared with
  // the empty floor). These come first, before any scenario that sends mail (the outbox lists what
  // the cold starts sent only) or adds applications (the console reads the demo user's).
  const sampleFacts = {
    apiUrl: env.apiUrl ?? 'https://api.example.com', authUrl: env.authUrl, tableName: table, dynamodbEndpoint: env.endpoint,
    demoClient: { clientId: DEMO_CLIENT.clientId, clientSecret: DEMO_CLIENT.clientSecret, redirectUri: CALLBACK },
    users: DEMO_USERS.map(({ user, password, devices }) => ({
      id: user.id, email: user.email, emailConfirmed: user.email_confirmed, password, devices: devices.map((d) => d.id),
    })),
  };
  const fromDeclarations: Scenario[] = [];
  for (const fn of Object.keys(FUNCTIONS)) {
    const { bench, sample, schedule, eventSource } = endpointOf(fn);
    const written = list.some((s) => s.fn === fn);
    // One place for a function's floor: its declaration's `bench` or its scenario here, never both.
    if (written && bench) throw new Error(`${fn} has a scenario in bench/scenarios.ts and a bench in its declaration: keep one`);
    if (written) continue;
    // A function without an HTTP route has no request to make up: its event is its trigger's, and
    // only a scenario of its own can say which one changes nothing and succeeds every time.
    if (schedule || eventSource) throw new Error(`${fn} has no HTTP route and no scenario in bench/scenarios.ts: add one with the event its trigger sends`);
    fromDeclarations.push({
      name: bench ? fn : `${fn} (generic)`, fn, expectStatus: sample.status,
      ...(bench ? { floor: [...bench.floor], minReason: bench.minReason } : { minReason: 'no bench in its declaration: the sample event, no floor' }),
      // What a sample stores stays: the benchmark's DynamoDB Local is discarded with the run.
      events: (n) => pool(n, 4, async () => (await sampleEvent(fn, sampleFacts, setupDoc)).event as BenchEvent),
    });
  }
  const close = () => setupDoc.destroy();
  return { scenarios: [...fromDeclarations, ...list], close };
}
