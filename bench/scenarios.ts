import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  BatchGetCommand, DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { doc as authDoc } from '#shared/auth/runtime';
import { createDocumentClient } from '#shared/data/client';
import { createGrantRepo } from '#shared/data/grant-repo';
import { createSessionRepo } from '#shared/data/session-repo';
import {
  clientKey, codeKey, deviceKey, devicesOfUserKey, familiesOfClientIndexKey, familyKey, refreshTokenKey, sessionKey, userKey,
} from '#shared/data/keys';
import { ALL_SCOPES } from '#shared/domain/scopes';
import { formatTimestamp } from '#shared/domain/time';
import { doc as resourceDoc } from '#shared/runtime';
import { DEMO_CLIENT, DEMO_USERS } from '#infra/local/seed';
import { FUNCTIONS, ROUTES, type FunctionName } from '#infra/routes';
import { ROOT } from './bundle.ts';
import { basicAuth, formBody, FORM_TYPE, makeEvent } from './events.ts';

// One realistic call per function (two for the token endpoint), with the bare DynamoDB requests
// of the same kinds it is compared with, and the fewest DynamoDB requests the design allows.
// Everything a call consumes (codes, refresh tokens, sessions) is created beforehand through the
// repositories, on a separate client, so that preparation is neither timed nor counted.

export type Handler = (event: APIGatewayProxyEventV2, context: unknown) => Promise<{ statusCode: number; body?: string; headers?: Record<string, string> }>;

export interface Scenario {
  /** Row label: the function name, with the case in parentheses when a function has several. */
  name: string;
  fn: FunctionName;
  /** Status every call must answer with; anything else stops the benchmark (it would measure an error path). */
  expectStatus?: number;
  /** Fewest DynamoDB requests per call the design allows, and why. Undefined: not analysed. */
  minRequests?: number;
  minReason: string;
  /** Budget on DynamoDB requests per call, where the issue sets one. */
  requestBudget?: number;
  /** `count` events, each good for one call. */
  events(count: number): Promise<APIGatewayProxyEventV2[]>;
  /** `count` bare calls of the same DynamoDB request kinds, on the function's own client and table. */
  bare?: { label: string; prepare(count: number): Promise<(() => Promise<unknown>)[]> };
}

export interface ScenarioEnv {
  endpoint: string;
  table: string;
  /** AUTH_ISSUER: the auth host, where the browser pages live. */
  authUrl: string;
}

const alice = DEMO_USERS[0].user;
const aliceDevice = DEMO_USERS[0].devices[0].id;
const CALLBACK = DEMO_CLIENT.redirectUris[0];

/** The clients the functions send through: every DynamoDB request of a handler goes through one of these. */
export const RUNTIME_CLIENTS: readonly DynamoDBDocumentClient[] = [resourceDoc, authDoc];

export async function loadHandler(fn: FunctionName): Promise<Handler> {
  const module = (await import(resolve(ROOT, FUNCTIONS[fn].entry))) as { handler: Handler };
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

/** The scenarios, and a `close` that releases the preparation client. */
export function createScenarios(env: ScenarioEnv): { scenarios: Scenario[]; close(): void } {
  const { table } = env;
  const setupDoc = createDocumentClient({ endpoint: env.endpoint });
  const grants = createGrantRepo({ doc: setupDoc, table });
  const sessions = createSessionRepo({ doc: setupDoc, table });
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
  const authEvent = (method: string, path: string, extra: { query?: Record<string, string>; form?: Record<string, string>; headers?: Record<string, string>; cookies?: string[] } = {}) =>
    makeEvent({
      routeKey: `${method} ${path}`, path, method, host: authHost, query: extra.query, cookies: extra.cookies,
      ...(extra.form ? { body: formBody(extra.form), headers: { ...FORM_TYPE, ...extra.headers } } : { headers: extra.headers }),
    });

  /** Fresh, unused authorization codes for the demo client (one PutItem each). */
  const freshCodes = (count: number) => pool(count, 16, async () => {
    const code = randomToken();
    await grants.createCode(hashSecret(code), {
      clientId: DEMO_CLIENT.clientId, userId: alice.id, redirectUri: CALLBACK, scopes,
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    });
    return code;
  });
  /** Fresh, active refresh tokens, each in its own family (a code redeemed through the repository). */
  const freshRefreshTokens = (count: number) => pool(count, 16, async () => {
    const code = randomToken();
    const codeHash = hashSecret(code);
    await grants.createCode(codeHash, {
      clientId: DEMO_CLIENT.clientId, userId: alice.id, redirectUri: CALLBACK, scopes,
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    });
    const token = randomToken();
    const familyId = randomUUID();
    const common = { familyId, clientId: DEMO_CLIENT.clientId, userId: alice.id, scopes };
    await grants.redeemCode(codeHash, formatTimestamp(new Date()), { ...common, status: 'active', createdAt: formatTimestamp(new Date()) },
      { ...common, tokenHash: hashSecret(token), status: 'active' });
    return { token, tokenHash: hashSecret(token), familyId };
  });
  let sharedSession: Promise<string> | undefined;
  const aliceSession = () => (sharedSession ??= sessions.createSession(alice.id));
  const csrf = randomToken();

  // The bare request kinds, written as the repositories send them.
  const bareGetItem = (Key: Record<string, string>, doc: DynamoDBDocumentClient) => () => doc.send(new GetCommand({ TableName: table, Key }));
  const batchGetWithClient = (doc: DynamoDBDocumentClient, key: Record<string, string>) => doc.send(new BatchGetCommand({
    RequestItems: { [table]: { Keys: [key, clientKey(DEMO_CLIENT.clientId)], ConsistentRead: true } },
  }));

  const readAuthorize = { client_id: DEMO_CLIENT.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read_user read_device', state: 'af0ifjsldkj' };

  const list: Scenario[] = [
    {
      name: 'get-user', fn: 'get-user', expectStatus: 200, minRequests: 1, requestBudget: 1,
      minReason: 'GetItem of the profile',
      events: async (n) => repeat(n, () => resourceEvent('get-user')),
      bare: { label: 'GetItem', prepare: async (n) => repeat(n, () => bareGetItem(userKey(alice.id), resourceDoc)) },
    },
    {
      name: 'list-devices', fn: 'list-devices', expectStatus: 200, minRequests: 1, requestBudget: 1,
      minReason: 'Query of the owner partition',
      events: async (n) => repeat(n, () => resourceEvent('list-devices')),
      bare: {
        label: 'Query',
        prepare: async (n) => repeat(n, () => () => {
          const { pk, skPrefix } = devicesOfUserKey(alice.id);
          return resourceDoc.send(new QueryCommand({
            TableName: table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
          }));
        }),
      },
    },
    {
      name: 'get-device', fn: 'get-device', expectStatus: 200, minRequests: 1, requestBudget: 1,
      minReason: 'GetItem under the owner key',
      events: async (n) => repeat(n, () => resourceEvent('get-device', { pathParameters: { device_id: aliceDevice } })),
      bare: { label: 'GetItem', prepare: async (n) => repeat(n, () => bareGetItem(deviceKey(alice.id, aliceDevice), resourceDoc)) },
    },
    {
      name: 'update-device', fn: 'update-device', expectStatus: 204, minRequests: 1, requestBudget: 1,
      minReason: 'conditional UpdateItem under the owner key',
      events: async (n) => repeat(n, () => resourceEvent('update-device', {
        pathParameters: { device_id: aliceDevice },
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Living room', active: false }),
      })),
      bare: {
        label: 'UpdateItem',
        prepare: async (n) => repeat(n, () => () => resourceDoc.send(new UpdateCommand({
          TableName: table, Key: deviceKey(alice.id, aliceDevice),
          UpdateExpression: 'SET #f0 = :v0, #f1 = :v1', ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#f0': 'name', '#f1': 'active' }, ExpressionAttributeValues: { ':v0': 'Living room', ':v1': false },
        }))),
      },
    },
    {
      name: 'post-token (refresh)', fn: 'post-token', expectStatus: 200, minRequests: 2, requestBudget: 2,
      minReason: 'BatchGetItem(token, client) + TransactWriteItems(family check, rotate, successor)',
      events: async (n) => (await freshRefreshTokens(n)).map(({ token }) => authEvent('POST', '/oauth/token', {
        headers: { authorization: basicAuth(DEMO_CLIENT.clientId, DEMO_CLIENT.clientSecret) },
        form: { grant_type: 'refresh_token', refresh_token: token },
      })),
      bare: {
        label: 'BatchGetItem+TransactWriteItems',
        prepare: async (n) => (await freshRefreshTokens(n)).map(({ tokenHash, familyId }) => async () => {
          await batchGetWithClient(authDoc, refreshTokenKey(tokenHash));
          const successor = hashSecret(randomToken());
          await authDoc.send(new TransactWriteCommand({
            TransactItems: [
              {
                ConditionCheck: {
                  TableName: table, Key: familyKey(familyId), ConditionExpression: '#status = :active',
                  ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':active': 'active' },
                },
              },
              {
                Update: {
                  TableName: table, Key: refreshTokenKey(tokenHash),
                  UpdateExpression: 'SET #status = :rotated, rotatedAt = :at, successorHash = :next, sealedSuccessor = :sealed',
                  ConditionExpression: '#status = :active', ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: { ':rotated': 'rotated', ':active': 'active', ':at': Date.now(), ':next': successor, ':sealed': randomToken() },
                },
              },
              {
                Put: {
                  TableName: table,
                  Item: { ...refreshTokenKey(successor), tokenHash: successor, familyId, clientId: DEMO_CLIENT.clientId, userId: alice.id, scopes, status: 'active' },
                },
              },
            ],
          }));
        }),
      },
    },
    {
      name: 'post-token (code)', fn: 'post-token', expectStatus: 200, minRequests: 2, requestBudget: 2,
      minReason: 'BatchGetItem(code, client) + TransactWriteItems(use code, family, first token)',
      events: async (n) => (await freshCodes(n)).map((code) => authEvent('POST', '/oauth/token', {
        form: { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret },
      })),
      bare: {
        label: 'BatchGetItem+TransactWriteItems',
        prepare: async (n) => (await freshCodes(n)).map((code) => async () => {
          const codeHash = hashSecret(code);
          await batchGetWithClient(authDoc, codeKey(codeHash));
          const familyId = randomUUID();
          const tokenHash = hashSecret(randomToken());
          const common = { familyId, clientId: DEMO_CLIENT.clientId, userId: alice.id, scopes };
          await authDoc.send(new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: table, Key: codeKey(codeHash), UpdateExpression: 'SET usedAt = :usedAt, familyId = :familyId',
                  ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
                  ExpressionAttributeValues: { ':usedAt': formatTimestamp(new Date()), ':familyId': familyId },
                },
              },
              {
                Put: {
                  TableName: table,
                  Item: {
                    ...familyKey(familyId), ...familiesOfClientIndexKey(DEMO_CLIENT.clientId, alice.id, familyId),
                    ...common, status: 'active', createdAt: formatTimestamp(new Date()),
                  },
                },
              },
              { Put: { TableName: table, Item: { ...refreshTokenKey(tokenHash), ...common, tokenHash, status: 'active' } } },
            ],
          }));
        }),
      },
    },
    {
      name: 'post-revoke', fn: 'post-revoke', expectStatus: 200, minRequests: 2,
      minReason: 'BatchGetItem(token, client) + UpdateItem(family revoked)',
      events: async (n) => (await freshRefreshTokens(n)).map(({ token }) => authEvent('POST', '/oauth/revoke', {
        headers: { authorization: basicAuth(DEMO_CLIENT.clientId, DEMO_CLIENT.clientSecret) },
        form: { token, token_type_hint: 'refresh_token' },
      })),
      bare: {
        label: 'BatchGetItem+UpdateItem',
        prepare: async (n) => (await freshRefreshTokens(n)).map(({ tokenHash, familyId }) => async () => {
          await batchGetWithClient(authDoc, refreshTokenKey(tokenHash));
          await authDoc.send(new UpdateCommand({
            TableName: table, Key: familyKey(familyId), UpdateExpression: 'SET #status = :revoked', ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':revoked': 'revoked' },
          }));
        }),
      },
    },
    {
      name: 'get-authorize', fn: 'get-authorize', expectStatus: 302, minRequests: 3,
      minReason: 'signed-in user with consent: BatchGetItem(client, session) + GetItem(consent) + PutItem(code)',
      events: async (n) => {
        const session = await aliceSession();
        await grants.saveConsent({ userId: alice.id, clientId: DEMO_CLIENT.clientId, scopes, grantedAt: formatTimestamp(new Date()) });
        return repeat(n, () => authEvent('GET', '/oauth/authorize', { query: readAuthorize, cookies: [`session=${session}`] }));
      },
    },
    {
      name: 'post-authorize', fn: 'post-authorize', expectStatus: 303, minRequests: 2,
      minReason: 'consent allowed: BatchGetItem(client, session) + TransactWriteItems(consent ADD scopes, code)',
      events: async (n) => {
        const session = await aliceSession();
        return repeat(n, () => authEvent('POST', '/oauth/authorize', {
          cookies: [`session=${session}`, `csrf=${csrf}`], form: { ...readAuthorize, csrf, decision: 'allow' },
        }));
      },
    },
    {
      name: 'get-login', fn: 'get-login', expectStatus: 200, minRequests: 0,
      minReason: 'first visit, no session cookie: the form only',
      events: async (n) => repeat(n, () => authEvent('GET', '/login', { query: { return_to: '/account' } })),
    },
    {
      name: 'post-login', fn: 'post-login', expectStatus: 303, minRequests: 3,
      minReason: 'BatchGetItem(throttles, e-mail link) + GetItem(user) + BatchWriteItem(clear throttle, session)',
      events: async (n) => repeat(n, () => authEvent('POST', '/login', {
        cookies: [`csrf=${csrf}`], form: { email: alice.email, password: DEMO_USERS[0].password, csrf, return_to: '/account' },
      })),
    },
    {
      name: 'post-logout', fn: 'post-logout', expectStatus: 303, minRequests: 1,
      minReason: 'DeleteItem of the session',
      events: async (n) => (await pool(n, 16, () => sessions.createSession(alice.id))).map((session) =>
        authEvent('POST', '/logout', { cookies: [`session=${session}`, `csrf=${csrf}`], form: { csrf } })),
      bare: {
        label: 'DeleteItem',
        prepare: async (n) => (await pool(n, 16, () => sessions.createSession(alice.id))).map((session) => () =>
          authDoc.send(new DeleteCommand({ TableName: table, Key: sessionKey(hashSecret(session)) }))),
      },
    },
    {
      name: 'get-discovery', fn: 'get-discovery', expectStatus: 200, minRequests: 0, minReason: 'static document',
      events: async (n) => repeat(n, () => authEvent('GET', '/.well-known/openid-configuration')),
    },
    {
      name: 'get-jwks', fn: 'get-jwks', expectStatus: 200, minRequests: 0, minReason: 'public key (AWS: one KMS GetPublicKey per container)',
      events: async (n) => repeat(n, () => authEvent('GET', '/.well-known/jwks.json')),
    },
    {
      name: 'http-fallback', fn: 'http-fallback', expectStatus: 405, minRequests: 0, minReason: 'answered from the route table',
      events: async (n) => repeat(n, () => makeEvent({ routeKey: 'ANY /user', path: '/user', method: 'DELETE' })),
    },
  ];

  // A function added to the route table without a scenario here is still bundled, cold-started and
  // called, so that it appears in the table: its first route, as the signed-in demo user (session
  // and CSRF cookies; a POST carries only the CSRF field). Its row is marked "(generic)": the call
  // may well be an error path, and no minimum is known.
  for (const fn of Object.keys(FUNCTIONS) as FunctionName[]) {
    if (list.some((s) => s.fn === fn)) continue;
    const route = ROUTES.find((r) => r.fn === fn);
    list.push({
      name: `${fn} (generic)`, fn, minReason: 'no scenario in bench/scenarios.ts yet',
      events: async (n) => {
        if (!route) return repeat(n, () => makeEvent({ routeKey: '$default', path: '/', method: 'GET' }));
        const path = route.path.replace(/\{\w+\}/g, 'x');
        if (route.scopes) {
          return repeat(n, () => makeEvent({
            routeKey: `${route.method} ${route.path}`, path, method: route.method,
            claims: { sub: alice.id, client_id: DEMO_CLIENT.clientId, scope: route.scopes!.join(' ') },
          }));
        }
        const cookies = [`session=${await aliceSession()}`, `csrf=${csrf}`];
        return repeat(n, () => authEvent(route.method, path, route.method === 'GET' ? { cookies } : { cookies, form: { csrf } }));
      },
    });
  }
  return { scenarios: list, close: () => setupDoc.destroy() };
}
