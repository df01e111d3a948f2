import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentClient } from '#shared/data/document-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '#local/dynamodb-local';
import { DEMO_CLIENT, DEMO_USERS } from '#local/seed';
import type { LocalService } from '#local/service';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { AWS_CALL_LIMITS } from '#shared/aws/client-config';
import { createDocumentClient } from '#shared/data/dynamodb';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createGrantRepo } from '#shared/data/grant-repo';
import type { Device } from '#shared/domain/device';
import { Browser, createAccount, formFields, obtainCode, textOf, type Reply } from '../support/oauth-client';
import { startTestService, tokenFor } from '../support/service';

// A stalled DynamoDB: its Java process paused with SIGSTOP, so connections are still accepted (by
// the kernel) and requests are sent, but nothing answers. This file runs its own DynamoDB Local:
// pausing the run's shared one would stall every other test file.

/** The longest a request may take when a dependency stalls (the function times out at 10 s). */
const BUDGET_MS = 3000;
const ALICE = DEMO_USERS[0];
const DEVICE_ID = ALICE.devices[0].id;
const ORIGINAL = { name: ALICE.devices[0].name, active: ALICE.devices[0].active, sound: ALICE.devices[0].sound };
const CHANGED = { name: 'Renamed while stalled', active: !ORIGINAL.active, sound: !ORIGINAL.sound };

interface Timed extends Reply {
  ms: number;
}

describe('a stalled DynamoDB', () => {
  let ddb: DynamoDbLocal | undefined;
  let service: LocalService | undefined;
  let stateDir: string | undefined;
  let doc: DocumentClient;
  /** When set, the authorization server's next DynamoDB command of this name pauses DynamoDB first. */
  let pauseBefore: { command: string; paused: () => void } | undefined;

  const pause = () => process.kill(ddb!.pid, 'SIGSTOP');
  const resume = () => {
    try {
      if (ddb) process.kill(ddb.pid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  };

  beforeAll(async () => {
    ddb = await startDynamoDbLocal();
    stateDir = mkdtempSync(join(tmpdir(), 'dus-stall-'));
    service = await startTestService({ dynamodbEndpoint: ddb.endpoint, stateDir });
    doc = createDocumentClient({ endpoint: ddb.endpoint });
    // The authorization server's own client, imported after the service set the environment it reads.
    const { doc: authDoc } = await import('#shared/runtime');
    authDoc.middlewareStack.add((next, context) => async (args) => {
      if (pauseBefore && context.commandName === pauseBefore.command) {
        pause();
        pauseBefore.paused();
        pauseBefore = undefined;
      }
      return next(args);
    }, { step: 'initialize', name: 'pause-dynamodb-local' });
  });

  afterAll(async () => {
    resume();
    doc?.destroy();
    await service?.stop();
    await ddb?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  async function timed(request: Promise<Reply>): Promise<Timed> {
    const started = performance.now();
    const reply = await request;
    return { ...reply, ms: performance.now() - started };
  }

  async function api(method: string, path: string, token: string, body?: unknown): Promise<Reply> {
    const response = await fetch(`${service!.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(8000),
    });
    return { status: response.status, headers: response.headers, text: await response.text(), location: null, setCookies: [] };
  }

  async function tokenRequest(fields: Record<string, string>): Promise<Reply> {
    const response = await fetch(`${service!.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      signal: AbortSignal.timeout(8000),
    });
    return { status: response.status, headers: response.headers, text: await response.text(), location: null, setCookies: [] };
  }

  function expectUnavailableJson(reply: Timed) {
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(reply.text)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(reply.ms).toBeGreaterThanOrEqual(AWS_CALL_LIMITS.requestTimeoutMs);
    expect(reply.ms).toBeLessThan(BUDGET_MS);
  }

  function expectUnavailablePage(reply: Timed) {
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
    expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(textOf(reply.text)).toContain('Error 503 Temporarily unavailable');
    expect(textOf(reply.text)).toContain('The service is temporarily unavailable');
    expect(reply.setCookies.filter((c) => c.startsWith('session='))).toEqual([]);
    expect(reply.ms).toBeGreaterThanOrEqual(AWS_CALL_LIMITS.requestTimeoutMs);
    expect(reply.ms).toBeLessThan(BUDGET_MS);
  }

  /** What the table holds of a code: whether it was used, and the family its exchange made of it. */
  async function codeState(code: string, userId: string) {
    const grants = createGrantRepo({ doc, table: service!.tableName });
    const { familyId } = grantTokenNames(code)!;
    const item = await grants.getFamily(familyId);
    const used = item !== undefined && item.status !== 'pending';
    const listed = (await grants.grantsOf(DEMO_CLIENT.clientId, userId)).families;
    const statuses = await Promise.all(listed.map(async (f) => ({ ...f, status: (await grants.getFamily(f.familyId))?.status })));
    return {
      used,
      familyId: used ? familyId : undefined,
      family: used ? item : undefined,
      activeFamilies: statuses.filter((f) => f.status === 'active').map((f) => f.familyId),
    };
  }

  /** The code was consumed together with its family (holding its first refresh token's hash), or not at all. */
  function expectWhole(state: Awaited<ReturnType<typeof codeState>>) {
    if (state.used) {
      expect(state.familyId).toEqual(expect.any(String));
      expect(state.family?.familyId).toBe(state.familyId);
      expect(state.family?.activeTokenHash).toEqual(expect.any(String));
    } else {
      expect(state).toMatchObject({ familyId: undefined, activeFamilies: [] });
    }
  }

  async function readDevice(): Promise<Device | undefined> {
    return createDeviceRepo({ doc, table: service!.tableName }).getOwnedDevice(ALICE.user.id, DEVICE_ID);
  }

  it(`answers 503 with Retry-After within ${BUDGET_MS / 1000} s on JSON and HTML endpoints, and leaves no half-written state`, async () => {
    // Prepare: a user with a session and a fresh code, a signed-out browser at the login form, an access token.
    const account = await createAccount(service!);
    const browser = new Browser(service!.authUrl);
    const { code, redirectUri } = await obtainCode(browser, { scope: 'read_device' }, account);
    const exchange = {
      grant_type: 'authorization_code', code, redirect_uri: redirectUri,
      client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret,
    };
    const guest = new Browser(service!.authUrl);
    const loginForm = formFields((await guest.get('/login')).text, '/login');
    const login = { ...loginForm, email: ALICE.user.email, password: ALICE.password };
    const token = await tokenFor(service!, ALICE.user.id, ['read_device', 'write_device']);
    // The gateway's authorizer has the issuer's keys cached, as API Gateway's does for an hour
    // (the JWKS itself reads the key schedule from the table).
    expect((await api('GET', '/devices', token)).status).toBe(200);
    expect(await readDevice()).toMatchObject(ORIGINAL);

    // Act: DynamoDB stops answering in the middle of the code exchange (its reads done, as it
    // writes), and every other request arrives while it is stopped.
    let replies: Timed[];
    try {
      const paused = new Promise<void>((resolve) => { pauseBefore = { command: 'UpdateItemCommand', paused: resolve }; });
      const exchanging = timed(tokenRequest(exchange));
      await Promise.race([paused, exchanging]);
      replies = await Promise.all([
        exchanging,
        timed(api('GET', '/devices', token)),
        timed(api('PUT', `/devices/${DEVICE_ID}`, token, CHANGED)),
        timed(browser.get('/account')),
        timed(guest.postForm('/login', login)),
      ]);
    } finally {
      pauseBefore = undefined;
      resume();
    }

    // Assess: each answered 503 with Retry-After, in its format, within the budget.
    const [exchanged, listed, updated, accountPage, loggedIn] = replies;
    expectUnavailableJson(exchanged!);
    expectUnavailableJson(listed!);
    expectUnavailableJson(updated!);
    expectUnavailablePage(accountPage!);
    expectUnavailablePage(loggedIn!);

    // Assess: DynamoDB answers again, and the service with it.
    await expect.poll(async () => (await api('GET', '/devices', token)).status, { timeout: 5000, interval: 100 }).toBe(200);

    // Assess: the stalled update happened whole or not at all (a request DynamoDB had received may
    // still be applied once it runs again), and repeating it succeeds.
    const device = await readDevice();
    expect([ORIGINAL, CHANGED]).toContainEqual({ name: device?.name, active: device?.active, sound: device?.sound });
    expect((await api('PUT', `/devices/${DEVICE_ID}`, token, CHANGED)).status).toBe(204);
    expect(await readDevice()).toMatchObject(CHANGED);

    // Assess: the code was consumed with its tokens or not at all; repeating the exchange gets the
    // tokens if it was not, and invalid_grant if it was (which revokes what it produced).
    expectWhole(await codeState(code, account.user.id));
    const retried = await tokenRequest(exchange);
    const after = await codeState(code, account.user.id);
    expectWhole(after);
    expect(after.used).toBe(true);
    if (retried.status === 200) {
      const { access_token: accessToken } = JSON.parse(retried.text) as { access_token: string };
      expect(after.activeFamilies).toEqual([after.familyId]);
      expect((await api('GET', '/devices', accessToken)).status).toBe(200);
    } else {
      expect({ status: retried.status, body: JSON.parse(retried.text) }).toEqual({
        status: 400, body: { error: 'invalid_grant', error_description: expect.any(String) },
      });
      expect(after.family?.status).toBe('revoked');
      expect(after.activeFamilies).toEqual([]);
    }

    // Assess: the pages work again.
    expect((await browser.get('/account')).status).toBe(200);
    expect((await guest.postForm('/login', login)).status).toBe(303);
  });
});
