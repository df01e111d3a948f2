import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { createLocalKeyStore } from '#shared/keys/local-signer';
import { AUTHORIZER_JWKS_CACHE_SECONDS, JWKS_MAX_AGE_SECONDS, KEY_SCHEDULE_CACHE_SECONDS, PUBLISH_LEAD_SECONDS, type SigningKeyStore } from '#shared/keys/schedule';
import { ENV } from '#shared/config';
import { createSigningKeyRepo, KeyScheduleConflictError, type SigningKeyRepo } from '#shared/data/signing-key-repo';
import { Browser, obtainCode } from '../support/oauth-client';
import { freshTable, tokenFor, useTable, useTestService } from '../support/service';
import { ACCESS_TOKEN_TTL_SECONDS } from '#shared/domain/grant';
import { rotateSigningKeys } from '#shared/keys/rotation';

// A signing-key rotation from start to end, against the whole local service: the token endpoint, the
// JWKS and the gateway's JWT authorizer (which caches the JWKS for an hour, as API Gateway does). The
// service runs in this process, on this process's clock: the test stops time and moves it on itself
// through every phase, so the hours of waiting take no time. At each phase a full authorize-to-API
// flow runs, and every token issued so far is checked against the gateway while it is valid.
describe('signing-key rotation without downtime', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  const repo = createSigningKeyRepo({ doc, table: service.tableName });
  let store: SigningKeyStore;
  let now: number;
  /** Moves the clock on by `seconds`. */
  const pass = (seconds: number) => vi.setSystemTime((now += seconds * 1000));

  beforeAll(() => {
    store = createLocalKeyStore(service.signingKeyFile);
    // Whole seconds, as JWT times are: a token is live exactly while `now < exp`.
    now = Math.floor(Date.now() / 1000) * 1000;
    vi.setSystemTime(now);
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  const rotate = () => rotateSigningKeys({ repo, store }, { mode: 'now' });
  const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
  const jwksKids = async () => ((await (await fetch(`${service.authUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  const callApi = (token: string) => fetch(`${service.apiUrl}/devices`, { headers: { authorization: `Bearer ${token}` } });

  interface Issued { accessToken: string; kid: string; issuedAt: number }
  const issued: Issued[] = [];

  /** The whole flow of an app: authorization, code exchange, refresh, API call. Every step must succeed. */
  async function flow(): Promise<Issued> {
    const { code, redirectUri } = await obtainCode(new Browser(service.authUrl));
    const token = (fields: Record<string, string>) => fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret, ...fields }),
    });
    const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    expect(exchanged.status).toBe(200);
    const first = (await exchanged.json()) as { access_token: string; refresh_token: string };
    expect((await callApi(first.access_token)).status).toBe(200);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(200);
    const { access_token: accessToken } = (await refreshed.json()) as { access_token: string };
    expect((await callApi(accessToken)).status).toBe(200);
    const result = { accessToken, kid: kidOf(accessToken), issuedAt: now };
    issued.push(result);
    return result;
  }

  /** Every token issued so far that has not expired is accepted by the gateway. */
  async function everyLiveTokenAccepted() {
    const live = issued.filter((t) => t.issuedAt + ACCESS_TOKEN_TTL_SECONDS * 1000 > now);
    const statuses = await Promise.all(live.map(async (t) => (await callApi(t.accessToken)).status));
    expect(statuses).toEqual(live.map(() => 200));
    return live.length;
  }

  it('publishes the next key first, signs with it after the caches saw it, and retires the old one after its last token expired', async () => {
    // Before: the service's own key signs and is the only one published.
    const before = await flow();
    const initialKid = before.kid;
    expect(await jwksKids()).toEqual([initialKid]);

    // Step 1, introduce: the next key is published at once, and does not sign yet.
    const step = await rotate();
    const next = step.introduced!;
    expect(step.keys.map(({ key, phase }) => [key.kid, phase])).toEqual([[initialKid, 'active'], [next.kid, 'pending']]);
    expect(next.activateAt - next.createdAt).toBe(PUBLISH_LEAD_SECONDS);
    pass(KEY_SCHEDULE_CACHE_SECONDS);
    expect(await jwksKids()).toEqual([initialKid, next.kid]);
    expect((await flow()).kid).toBe(initialKid);
    expect(await everyLiveTokenAccepted()).toBe(2);
    // A second rotation while a key is pending changes nothing.
    expect((await rotate()).introduced).toBeUndefined();

    // Every copy of the JWKS still cached when the next key starts signing (the authorizer's hour, the
    // response's max-age) was fetched after it had been published.
    pass(PUBLISH_LEAD_SECONDS - KEY_SCHEDULE_CACHE_SECONDS - AUTHORIZER_JWKS_CACHE_SECONDS - JWKS_MAX_AGE_SECONDS);
    expect(await jwksKids()).toContain(next.kid);
    expect((await flow()).kid).toBe(initialKid);
    pass(AUTHORIZER_JWKS_CACHE_SECONDS + JWKS_MAX_AGE_SECONDS - 1);
    const lastOfOld = await flow();
    expect(lastOfOld.kid).toBe(initialKid);
    expect(await everyLiveTokenAccepted()).toBeGreaterThan(0);

    // Step 2, switch (by the clock, no write): the next key signs; the old one is still published.
    pass(1);
    expect((await flow()).kid).toBe(next.kid);
    expect(await jwksKids()).toEqual([next.kid, initialKid]);
    expect(await everyLiveTokenAccepted()).toBe(2);

    // The old key's last token is accepted to its last second.
    pass(ACCESS_TOKEN_TTL_SECONDS - 2);
    expect((await callApi(lastOfOld.accessToken)).status).toBe(200);
    expect((await flow()).kid).toBe(next.kid);
    expect(await jwksKids()).toEqual([next.kid, initialKid]);

    // Step 3, retire: once every token of the old key has expired, it is no longer published.
    const retireAt = (await repo.getSchedule())!.keys.find((k) => k.kid === initialKid)!.retireAt!;
    expect(retireAt * 1000).toBeGreaterThan(lastOfOld.issuedAt + ACCESS_TOKEN_TTL_SECONDS * 1000);
    vi.setSystemTime((now = retireAt * 1000));
    expect((await flow()).kid).toBe(next.kid);
    pass(KEY_SCHEDULE_CACHE_SECONDS);
    expect(await jwksKids()).toEqual([next.kid]);
    expect(await everyLiveTokenAccepted()).toBeGreaterThan(0);

    // A token of the retired key, however fresh, is refused once the authorizer's cache has expired.
    pass(AUTHORIZER_JWKS_CACHE_SECONDS);
    const forged = await tokenFor(service, 'someone', ['read_device'], { now: new Date(now) });
    expect(kidOf(forged)).toBe(initialKid);
    const refused = await callApi(forged);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('the token was signed by an unknown key');
    expect((await flow()).kid).toBe(next.kid);
  });

  it('the next rotation deletes the keys that are retired (never the service\'s own key file)', async () => {
    const second = (await rotate()).introduced!;
    const [current] = (await repo.getSchedule())!.keys.filter((k) => k.kid !== second.kid);
    const keyFile = join(dirname(service.signingKeyFile), current!.ref);
    expect(existsSync(keyFile)).toBe(true);
    vi.setSystemTime((now = (current!.retireAt! + 1) * 1000));
    expect((await flow()).kid).toBe(second.kid);

    const third = await rotate();

    expect(third.deleted.map((k) => k.kid)).toEqual([current!.kid]);
    expect(existsSync(keyFile)).toBe(false);
    expect(existsSync(service.signingKeyFile)).toBe(true);
    expect(third.keys.map(({ key, phase }) => [key.kid, phase])).toEqual([[second.kid, 'active'], [third.introduced!.kid, 'pending']]);
    pass(KEY_SCHEDULE_CACHE_SECONDS);
    expect(await jwksKids()).toEqual([second.kid, third.introduced!.kid]);
    expect((await flow()).kid).toBe(second.kid);
  });

  it('of two rotations at once, one fails and leaves no key behind', async () => {
    vi.setSystemTime((now += (PUBLISH_LEAD_SECONDS + 1) * 1000));
    const before = (await repo.getSchedule(true))!;
    const created: string[] = [];
    const counting: SigningKeyStore = { ...store, createKey: async () => { const key = await store.createKey(); created.push(key.ref); return key; } };
    // Both read the schedule before either writes.
    let reads = 0;
    let bothRead!: () => void;
    const barrier = new Promise<void>((resolveBarrier) => { bothRead = resolveBarrier; });
    const racing: SigningKeyRepo = {
      ...repo,
      getSchedule: async (consistent) => {
        const schedule = await repo.getSchedule(consistent);
        if (++reads === 2) bothRead();
        await barrier;
        return schedule;
      },
    };

    const results = await Promise.allSettled([
      rotateSigningKeys({ repo: racing, store: counting }, { mode: 'now' }), rotateSigningKeys({ repo: racing, store: counting }, { mode: 'now' }),
    ]);

    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.find((r) => r.status === 'rejected')!.reason).toBeInstanceOf(KeyScheduleConflictError);
    const after = (await repo.getSchedule(true))!;
    expect(after.version).toBe(before.version + 1);
    const kept = created.filter((ref) => existsSync(join(dirname(service.signingKeyFile), ref)));
    expect(kept).toHaveLength(1);
    expect(after.keys.map((k) => k.ref)).toContain(kept[0]);
    await flow();
  });
});

describe('npm run admin -- rotate-signing-key', () => {
  it('runs one rotation step on the local service that .local/service.json names, and says where the keys are', async () => {
    const { endpoint, table, doc } = await freshTable();
    const cwd = mkdtempSync(join(tmpdir(), 'dus-admin-'));
    try {
      const signingKeyFile = join(cwd, '.local', 'signing-key.pem');
      mkdirSync(dirname(signingKeyFile));
      writeFileSync(join(cwd, '.local', 'service.json'), JSON.stringify({
        apiUrl: 'http://localhost:1', authUrl: 'http://localhost:2', tableName: table, dynamodbEndpoint: endpoint, signingKeyFile,
        outboxDir: join(cwd, '.local', 'outbox'), demoClient: {}, users: [],
      }));
      // Set by the local service in this process, TABLE_NAME would send the command to "AWS".
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== ENV.tableName));
      const run = () => new Promise<{ code: number | null; stdout: string }>((done) => {
        execFile(process.execPath, [resolve('node_modules/tsx/dist/cli.mjs'), resolve('local/admin.ts'), 'rotate-signing-key'], { cwd, env, timeout: 60_000 },
          (error, stdout) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout }));
      });

      const first = await run();
      const second = await run();

      expect(first.code).toBe(0);
      const schedule = (await createSigningKeyRepo({ doc, table }).getSchedule(true))!;
      const [own, next] = schedule.keys;
      expect(first.stdout).toContain(`Introduced key ${next!.kid}: published now, signs from ${new Date(next!.activateAt * 1000).toISOString()}.`);
      expect(first.stdout).toMatch(new RegExp(`active +${own!.kid} `));
      expect(first.stdout).toMatch(new RegExp(`pending +${next!.kid} `));
      expect(existsSync(join(cwd, '.local', next!.ref))).toBe(true);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/^No key introduced: a key is pending/);
      expect((await createSigningKeyRepo({ doc, table }).getSchedule(true))!.version).toBe(1);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
      doc.destroy();
    }
  }, 120_000);
});
