import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { serviceFacts } from '#local/service';
import { createDeviceRepo } from '#shared/data/device-repo';
import { createWebhookRepo } from '#shared/data/webhook-repo';
import { passkeyKey, recoveryCodesKey } from '#shared/data/item-keys';
import { epochSeconds, formatTimestamp } from '#shared/domain/time';
import { hashSecret, randomToken } from '#shared/secrets';
import { makeDevice } from '../support/factories';
import { Browser, createAccount, formFields, obtainCode, signIn, textOf, type Account } from '../support/oauth-client';
import { mailTo } from '../support/outbox';
import { runTool } from '../support/run-tool';
import { useTable, useTestService } from '../support/service';
import { addPasskey, enrolAuthenticatorApp, secondStep, signInWithPasskey } from '../support/two-step';
import { startReceiver } from '../support/webhook-receiver';

// "Download my data" and "Delete the account" over HTTP on the local
// service, with its webhook pipeline: the export against its JSON Schema and free of every secret the
// test made; the deletion's refusals (nothing changed), its events, its end (no item of the user
// but the bounded TTL records docs/design.md names), a deletion stopped half-way and finished by
// signing in again, and the admin commands.

const SCHEMA = JSON.parse(readFileSync('docs/export.schema.json', 'utf8')) as object;
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(SCHEMA);

describe('account export and deletion', () => {
  const service = useTestService({ webhooks: { timeScale: 1e-4 } });
  const { doc, repos } = useTable(service, { requestTimeoutMs: 10_000 });
  const webhooks = createWebhookRepo({ doc, table: service.tableName });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });
  /**
   * Stops every deletion of the service after `step` (its process is this one), until `release`: the
   * runtime is imported once the service has set its environment, which it reads at load.
   */
  async function stopDeletionsAfter(step: string) {
    const { onDeletionStep } = await import('#shared/runtime');
    onDeletionStep((done) => {
      if (done === step) throw new Error('the function stopped here');
    });
    return () => onDeletionStep(undefined);
  }

  /** Every secret the test makes for a user: each is searched for in the export. */
  interface Made extends Account {
    browser: Browser;
    secrets: string[];
    ownClientId: string;
    refreshToken: string;
  }

  /**
   * A user with everything: signed in, devices, a grant to the demo application (refresh token) through
   * the OAuth flow, and an application of their own with a client secret and a webhook.
   */
  async function populated(): Promise<Made> {
    const account = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, account)).status).toBe(303);
    for (let i = 0; i < 2; i++) await createDeviceRepo({ doc, table: service.tableName }).createDevice(account.user.id, makeDevice({ id: randomUUID(), name: `Lamp ${i}` }));
    const { code, redirectUri } = await obtainCode(browser, { scope: 'read_user read_device' }, account);
    const tokenReply = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret }),
    });
    const tokens = await tokenReply.json() as { access_token: string; refresh_token: string };
    expect(tokens.refresh_token).toBeTruthy();
    const clientSecret = `secret-${randomToken()}`;
    const ownClientId = `own-${randomUUID()}`;
    await repos.clients.createClient({
      clientId: ownClientId, secretHash: hashSecret(clientSecret), name: `Own app ${ownClientId.slice(4, 12)}`, description: 'Mine', website: 'https://own.example',
      redirectUris: ['https://own.example/cb'], developerId: account.user.id, developerName: 'Test User', createdAt: formatTimestamp(new Date()),
    });
    const { secret: webhookSecret } = await webhooks.setUrl(ownClientId, 'https://own.example/hook');
    const { Item: profile } = await doc.send(new GetCommand({ TableName: service.tableName, Key: { pk: `USER#${account.user.id}`, sk: 'PROFILE' } }));
    const secrets = [
      account.password, clientSecret, hashSecret(clientSecret), webhookSecret!, tokens.refresh_token, tokens.access_token, code, String(profile!.passwordHash),
      browser.jar.get('session')!, browser.jar.get('csrf')!, hashSecret(browser.jar.get('session')!), browser.jar.get('known_browser') ?? 'no-known-browser-cookie',
    ];
    return { ...account, browser, secrets, ownClientId, refreshToken: tokens.refresh_token };
  }

  /**
   * Adds the second factors to a populated user, each through its page: an authenticator app (one
   * recovery code spent by a sign-in), a passkey that signed in once and a synced one never used;
   * the sign-ins' browsers sign out again. Their keys, codes and hashes join the secrets.
   */
  async function withSecondFactors(made: Made): Promise<void> {
    const { secret, recoveryCodes } = await enrolAuthenticatorApp(made.browser);
    const laptop = await addPasskey(made.browser, made.user.id, 'Laptop');
    const phone = await addPasskey(made.browser, made.user.id, 'Phone', { backedUp: true });
    const signOut = async (b: Browser) => expect((await b.postForm('/logout', formFields((await b.get('/account')).text, '/logout'))).status).toBe(303);
    const withPasskey = new Browser(service.authUrl);
    expect((await signInWithPasskey(withPasskey, laptop)).status).toBe(303);
    await signOut(withPasskey);
    const withCode = new Browser(service.authUrl);
    const password = await signIn(withCode, made);
    const pendingSignIn = withCode.jar.get('pending_sign_in')!;
    expect((await secondStep(withCode, password.location!, recoveryCodes[0]!)).status).toBe(303);
    await signOut(withCode);
    const item = async (Key: { pk: string; sk: string }) => (await doc.send(new GetCommand({ TableName: service.tableName, Key }))).Item!;
    const codeHashes = [...((await item(recoveryCodesKey(made.user.id))).codes as Set<string>)];
    const publicKeys = await Promise.all([laptop, phone].map(async (p) => String((await item(passkeyKey(made.user.id, hashSecret(p.credentialId)))).publicKey)));
    made.secrets.push(
      secret, ...recoveryCodes, ...recoveryCodes.map((code) => code.replace(/-/g, '')), ...codeHashes, pendingSignIn, hashSecret(pendingSignIn),
      ...[laptop, phone].flatMap((p) => [p.credentialId, hashSecret(p.credentialId)]), ...publicKeys,
    );
  }

  const itemsNaming = async (account: Account) => {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.filter((item) => JSON.stringify(item).includes(account.user.id) || JSON.stringify(item).includes(account.user.email));
  };

  /**
   * After a deletion, what may still name the user: the address's login throttle records (1 day), the
   * browser's known-browser record (30 days), and applications' records of the webhook events they
   * were sent (30 days), each with its TTL (docs/design.md, "Deleting an account").
   */
  async function expectOnlyBoundedRecords(account: Account) {
    for (const item of await itemsNaming(account)) {
      expect(String(item.pk)).toMatch(/^(THROTTLE#|BROWSER#|DELIVERIES#)/);
      expect(Number(item.expiresAt)).toBeLessThanOrEqual(epochSeconds(new Date()) + 30 * 86_400 + 60);
    }
  }

  async function exportForm(browser: Browser) {
    return formFields((await browser.get('/account')).text, '/account/export');
  }
  async function deleteForm(browser: Browser) {
    const page = await browser.get('/account/delete');
    expect(page.status).toBe(200);
    return formFields(page.text, '/account/delete');
  }
  const refresh = (refreshToken: string) => fetch(`${service.authUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret }),
  });

  it('exports one JSON document valid against docs/export.schema.json, with the user’s data and none of the secrets the test made', async () => {
    const made = await populated();
    await withSecondFactors(made);
    const reply = await made.browser.postForm('/account/export', await exportForm(made.browser));

    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(reply.headers.get('content-disposition')).toMatch(/^attachment; filename="account-export-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const document = JSON.parse(reply.text) as Record<string, any>;
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(document.profile).toMatchObject({ id: made.user.id, email: made.user.email });
    expect(document.devices).toHaveLength(2);
    expect(document.authorizations).toEqual([expect.objectContaining({
      client_id: DEMO_CLIENT.clientId, application_name: DEMO_CLIENT.name, scopes: ['read_user', 'read_device'],
      grants: [expect.objectContaining({ status: 'active', scopes: ['read_user', 'read_device'] })],
    })]);
    // The browser and address the security page lists are data kept about her too.
    expect(document.sessions).toEqual([expect.objectContaining({ current: true, browser: expect.any(String), address: expect.stringMatching(/^[0-9a-f.:]+$/) })]);
    expect(document.applications).toEqual([expect.objectContaining({
      client_id: made.ownClientId, webhook: expect.objectContaining({ url: 'https://own.example/hook' }),
    })]);
    expect(document.email).toMatchObject({ address: made.user.email, copies_kept: false });
    expect(document.second_factors).toEqual({
      authenticator_app: { enrolled_at: expect.stringMatching(/^\d{4}-/) },
      recovery_codes_left: 9,
      passkeys: [
        { name: 'Laptop', created_at: expect.stringMatching(/^\d{4}-/), last_used_at: expect.stringMatching(/^\d{4}-/), backed_up: false },
        { name: 'Phone', created_at: expect.stringMatching(/^\d{4}-/), last_used_at: null, backed_up: true },
      ],
    });
    for (const secret of made.secrets) expect(reply.text, 'a secret in the export').not.toContain(secret);
    expect(reply.text).not.toMatch(/scrypt\$|whsec_|Hash"/);
  });

  it('exports an account without a second factor as such: no authenticator app, no recovery code, no passkey', async () => {
    const account = await createAccount(service);
    const browser = new Browser(service.authUrl);
    expect((await signIn(browser, account)).status).toBe(303);

    const reply = await browser.postForm('/account/export', await exportForm(browser));

    expect(reply.status).toBe(200);
    const document = JSON.parse(reply.text) as Record<string, any>;
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(document.second_factors).toEqual({ authenticator_app: null, recovery_codes_left: 0, passkeys: [] });
  });

  it('refuses an export asked with a forged CSRF field, or by a form of another account or another session: no data of the user', async () => {
    const made = await populated();
    const other = await populated();
    const fields = await exportForm(made.browser);

    const forged = await made.browser.postForm('/account/export', { ...fields, csrf: randomToken() });
    expect(forged.status).toBe(403);
    // Another browser (session) posts this user's form: its CSRF cookie is not the form's.
    const fromOtherSession = await other.browser.postForm('/account/export', fields);
    expect(fromOtherSession.status).toBe(403);
    // Another session's own form, its account field naming this user.
    const otherAccount = await other.browser.postForm('/account/export', { ...(await exportForm(other.browser)), account: made.user.id });
    expect(otherAccount.status).toBe(409);
    expect(textOf(otherAccount.text)).toContain('opened for another account');
    for (const reply of [forged, fromOtherSession, otherAccount]) {
      expect(reply.headers.get('content-type')).toContain('text/html');
      expect(reply.text).not.toContain(made.user.email);
    }
  });

  it('refuses a deletion without the password, with a wrong one (a failed login for the throttle), with a forged CSRF field or another account’s form, and while others use the user’s application: nothing changed', async () => {
    const made = await populated();
    const other = await populated();
    // The throttle records (keyed by the address) change with the wrong password; nothing else may.
    const besidesThrottle = async () => (await itemsNaming(made)).filter((item) => !String(item.pk).startsWith('THROTTLE#'));
    const before = await besidesThrottle();
    const fields = await deleteForm(made.browser);

    const noPassword = await made.browser.postForm('/account/delete', { ...fields, password: '' });
    expect(noPassword.status).toBe(400);
    expect(textOf(noPassword.text)).toContain('Type your password');
    const wrong = await made.browser.postForm('/account/delete', { ...fields, password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expect(textOf(wrong.text)).toContain('Incorrect password');
    const [accountRecord] = (await repos.throttle.getRecords(made.user.email, '127.0.0.1')).filter((r) => r.scope === 'account');
    expect(accountRecord!.failures).toBe(1);
    const forged = await made.browser.postForm('/account/delete', { ...fields, csrf: randomToken(), password: made.password });
    expect(forged.status).toBe(403);
    const otherForm = await other.browser.postForm('/account/delete', { ...(await deleteForm(other.browser)), account: made.user.id, password: made.password });
    expect(otherForm.status).toBe(409);

    // Someone else authorizes the user's application: the deletion is refused, and the page says which.
    await repos.grants.saveConsent({ userId: other.user.id, clientId: made.ownClientId, scopes: ['read_user'], grantedAt: formatTimestamp(new Date()) });
    const inUse = await made.browser.postForm('/account/delete', { ...fields, password: made.password });
    expect(inUse.status).toBe(409);
    expect(textOf(inUse.text)).toContain('Other people use applications you develop');
    expect(textOf((await made.browser.get('/account/delete')).text)).toContain('(1 person)');
    await repos.grants.deleteConsent(other.user.id, made.ownClientId);

    expect(await besidesThrottle()).toEqual(before);
    expect((await made.browser.get('/account')).status).toBe(200);
    expect(await mailTo(service, made.user.email)).toEqual([]);
  });

  it('refuses a deletion from a session signed in more than 10 minutes ago (a sensitive change asks for a fresh sign-in): sent to sign in again, nothing changed', async () => {
    const made = await populated();
    const old = new Browser(service.authUrl);
    const session = await repos.sessions.createSession(made.user.id, new Date(Date.now() - 11 * 60_000));
    old.jar.absorb([`session=${session}; Path=/`]);
    const fields = await deleteForm(old);
    const before = await itemsNaming(made);

    const refused = await old.postForm('/account/delete', { ...fields, password: made.password });

    expect(refused).toMatchObject({ status: 303, location: '/login?again=yes&return_to=%2Faccount%2Fdelete' });
    expect(await itemsNaming(made)).toEqual(before);
  });

  it('deletes the account: grant.revoked account_deleted delivered, refresh refused, no item of the user but bounded TTL records, the farewell e-mail, the address free', async () => {
    const hook = await startReceiver();
    stops.push(hook.stop);
    const { secret } = await webhooks.setUrl(DEMO_CLIENT.clientId, hook.url);
    const made = await populated();
    const fields = await deleteForm(made.browser);

    const reply = await made.browser.postForm('/account/delete', { ...fields, password: made.password });
    expect(reply.status).toBe(303);
    expect(reply.location).toBe('/account/delete?done=deleted');
    expect(made.browser.jar.get('session')).toBeUndefined();
    expect(textOf((await made.browser.get(reply.location!)).text)).toContain('Your account has been deleted');
    // The same form sent again (a replay): its CSRF token was its session's, which ended: refused.
    const replay = await made.browser.postForm('/account/delete', { ...fields, password: made.password });
    expect(replay.status).toBe(403);
    expect(textOf(replay.text)).toContain('This form has expired or was not sent from our page.');

    const event = await hook.next((r) => r.body.includes('grant.revoked') && r.body.includes(made.user.id), 20_000);
    const verified = new Webhook(secret!).verify(event.body, event.headers) as { type: string; data: Record<string, string> };
    expect(verified).toMatchObject({ type: 'grant.revoked', data: { user_id: made.user.id, client_id: DEMO_CLIENT.clientId, reason: 'account_deleted' } });
    const refused = await refresh(made.refreshToken);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });

    await expectOnlyBoundedRecords(made);
    expect((await itemsNaming(made)).some((item) => String(item.pk).startsWith('DELIVERIES#demo-client'))).toBe(true);
    expect((await mailTo(service, made.user.email)).map((m) => m.subject)).toEqual(['Your account has been deleted']);
    expect((await signIn(new Browser(service.authUrl), made)).status).toBe(401);

    const again = new Browser(service.authUrl);
    const signup = await again.get('/signup');
    const created = await again.postForm('/signup', {
      ...formFields(signup.text, '/signup'), firstname: 'New', lastname: 'Owner', email: made.user.email, password: 'a brand new sentence of a password', gender: '0',
    });
    expect(created.status).toBe(303);
    const record = await repos.users.findUserByEmail(made.user.email);
    expect(record?.user.id).not.toBe(made.user.id);
  }, 60_000);

  it('a deletion stopped half-way keeps the account out of every page; signing in leads to its end, which one more press finishes', async () => {
    const made = await populated();
    const fields = await deleteForm(made.browser);
    const release = await stopDeletionsAfter('devices');
    try {
      expect((await made.browser.postForm('/account/delete', { ...fields, password: made.password })).status).toBe(500);
    } finally {
      release();
    }
    // Marked: its session opens no page, the account page sends to the login.
    expect((await made.browser.get('/account')).status).toBe(302);
    const login = await signIn(made.browser, made);
    expect(login.status).toBe(303);
    expect(login.location).toBe('/account/delete');
    const page = await made.browser.get('/account/delete');
    expect(textOf(page.text)).toContain('Finish deleting the account');
    const finished = await made.browser.postForm('/account/delete', formFields(page.text, '/account/delete'));
    expect(finished.status).toBe(303);
    await expectOnlyBoundedRecords(made);
    expect((await mailTo(service, made.user.email)).map((m) => m.subject)).toEqual(['Your account has been deleted']);
  }, 60_000);

  it('npm run admin -- export-user and delete-user run the same export and deletion; delete-user --pending finishes a stopped one', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dus-admin-account-'));
    try {
      writeFileSync(join(stateDir, 'service.json'), JSON.stringify(serviceFacts(service)));
      const env = { STATE_DIR: stateDir, TABLE_NAME: '' };
      const made = await populated();

      const exported = await runTool('local/admin.ts', ['export-user', '--email', made.user.email], env);
      expect(exported.code, exported.stderr).toBe(0);
      const document = JSON.parse(exported.stdout) as Record<string, unknown>;
      expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
      for (const secret of made.secrets) expect(exported.stdout).not.toContain(secret);

      const deleted = await runTool('local/admin.ts', ['delete-user', '--email', made.user.email], env);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(JSON.parse(deleted.stdout)).toEqual({ deleted: made.user.id, email: made.user.email });
      await expectOnlyBoundedRecords(made);
      expect((await runTool('local/admin.ts', ['delete-user', '--email', made.user.email], env)).code).toBe(2);

      const stopped = await populated();
      const fields = await deleteForm(stopped.browser);
      const release = await stopDeletionsAfter('address');
      try {
        expect((await stopped.browser.postForm('/account/delete', { ...fields, password: stopped.password })).status).toBe(500);
      } finally {
        release();
      }
      const pending = await runTool('local/admin.ts', ['delete-user', '--pending'], env);
      expect(pending.code, pending.stderr).toBe(0);
      expect(JSON.parse(pending.stdout)).toEqual({ finished: [stopped.user.id] });
      await expectOnlyBoundedRecords(stopped);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 120_000);
});
