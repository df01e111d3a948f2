import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { countRequests } from '../support/count-requests';
import { type Account, authorizationParams, authorize, authorizePath, Browser, CODE_SHAPE, createAccount, formFields, nextLoopbackAddress, type Reply, signIn, textOf } from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';
import { addPasskey, enrolAuthenticatorApp, nextTotpCode, passkeySignInOptions } from '../support/two-step';

interface App {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUri: string;
}

/**
 * The DynamoDB requests one HTTP call to the authorization server costs, by operation and in
 * order, as the handlers' own client (shared/runtime.ts) sends them.
 */
describe('DynamoDB requests per browser call', () => {
  const service = useTestService();
  /** On a client of the test's own (not counted), to prepare and check the table. */
  const { repos } = useTable(service);
  let requests: ReturnType<typeof countRequests>;

  beforeAll(async () => {
    // The auth handlers' own client: imported after the service set the environment they read.
    const { doc } = await import('#shared/runtime');
    requests = countRequests(doc);
  });
  afterAll(() => requests?.detach());
  beforeEach(() => requests.reset());

  /** The operations `call` sends, and its reply; nothing before it counts. */
  async function measure(call: () => Promise<Reply>): Promise<{ reply: Reply; operations: string[] }> {
    requests.reset();
    const reply = await call();
    return { reply, operations: [...requests.operations] };
  }

  /** A browser signed in as a new account of its own. */
  async function signedIn(): Promise<{ b: Browser; account: Account }> {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    return { b, account };
  }

  /** Registers an application in the developer console of `b`. */
  async function registerApp(b: Browser): Promise<App> {
    const name = `App ${randomUUID().slice(0, 8)}`;
    const redirectUri = `https://${name.replace(' ', '-').toLowerCase()}.example/callback`;
    const consolePage = await b.get('/developer');
    const posted = await b.postForm('/developer/apps', {
      ...formFields(consolePage.text, '/developer/apps'), name, description: 'Counted.', website: 'https://app.example', redirect_uris: redirectUri,
    });
    expect(posted.status).toBe(303);
    const reply = await b.get(posted.location!);
    const clientId = /id="client-id">([^<]+)</.exec(reply.text)?.[1];
    const clientSecret = /id="client-secret">([^<]+)</.exec(reply.text)?.[1];
    if (!clientId || !clientSecret) throw new Error(`no credentials on: ${textOf(reply.text).slice(0, 300)}`);
    return { clientId, clientSecret, name, redirectUri };
  }

  /** The user signed in on `b` authorizes the app and the app exchanges the code: one token family. Returns its id. */
  async function tokenFamily(b: Browser, account: Account, app: App): Promise<string> {
    const callback = await authorize(b, paramsFor(app), { account });
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: app.redirectUri,
        client_id: app.clientId, client_secret: app.clientSecret,
      }),
    });
    expect(response.status).toBe(200);
    const { refresh_token: refreshToken } = (await response.json()) as { refresh_token: string };
    return grantTokenNames(refreshToken)!.familyId;
  }

  const paramsFor = (app: App, scope = 'read_user') => authorizationParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope });

  it('GET /oauth/authorize, signed in, with a consent that covers the scopes: BatchGetItem + PutItem (the code)', async () => {
    // Prepare
    const { b, account } = await signedIn();
    await authorize(b, authorizationParams({ scope: 'read_user read_device' }), { account });

    // Act
    const { reply, operations } = await measure(() => b.get(authorizePath(authorizationParams({ scope: 'read_device' }))));

    // Assess
    expect(reply.status).toBe(302);
    expect(new URL(reply.location!).searchParams.get('code')).toMatch(CODE_SHAPE);
    expect(operations).toEqual(['BatchGetItemCommand', 'PutItemCommand']);
  });

  it('GET /oauth/authorize, signed in, with no consent yet: one BatchGetItem for the consent page, and a Query of the devices to choose from', async () => {
    // Prepare
    const { b } = await signedIn();

    // Act
    const { reply, operations } = await measure(() => b.get(authorizePath(authorizationParams())));

    // Assess
    expect(reply.status).toBe(200);
    expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand']);
  });

  it('POST /oauth/authorize allow: BatchGetItem + Query (the devices chosen must be the user\'s) + TransactWriteItems (consent and code)', async () => {
    // Prepare
    const { b } = await signedIn();
    const page = await b.get(authorizePath(authorizationParams()));
    expect(page.status).toBe(200);

    // Act
    const { reply, operations } = await measure(() => b.postForm('/oauth/authorize', { ...formFields(page.text, '/oauth/authorize'), decision: 'allow' }));

    // Assess
    expect(reply.status).toBe(303);
    expect(new URL(reply.location!).searchParams.get('code')).toMatch(CODE_SHAPE);
    expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand', 'TransactWriteItemsCommand']);
  });

  describe('POST /login', () => {
    async function login(b: Browser, account: Account, password = account.password) {
      const form = await b.get('/login');
      return measure(() => b.postForm('/login', { ...formFields(form.text, '/login'), email: account.user.email, password }));
    }

    // The reservation is a write before the password check (concurrent attempts must not
    // buy extra guesses); the session, the known browser and the reservation's credit go in one transaction.
    it('success on a new browser: BatchGetItem (throttle records, e-mail) + TransactWriteItems (reserve) + GetItem (user) + TransactWriteItems (session, known browser, credit)', async () => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const { reply, operations } = await login(new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() }), account);

      // Assess
      expect(reply.status).toBe(303);
      expect(operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand', 'GetItemCommand', 'TransactWriteItemsCommand']);
    });

    it('success on a known browser: BatchGetItem (with the known browser) + UpdateItem (reserve on it) + GetItem + TransactWriteItems', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      expect((await login(b, account)).reply.status).toBe(303);
      b.jar.absorb(['session=; Max-Age=0']);

      // Act
      const { reply, operations } = await login(b, account);

      // Assess
      expect(reply.status).toBe(303);
      expect(operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'GetItemCommand', 'TransactWriteItemsCommand']);
    });

    it('a wrong password: BatchGetItem + TransactWriteItems (the reservation, which stays as the failure) + GetItem; a throttled attempt: BatchGetItem only', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      for (let i = 0; i < 2; i++) expect((await login(b, account, 'not the right password')).reply.status).toBe(401);

      // Act
      const failure = await login(b, account, 'not the right password');
      const throttled = await login(b, account);

      // Assess
      expect(failure.reply.status).toBe(401);
      expect(failure.operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand', 'GetItemCommand']);
      expect(throttled.reply.status).toBe(429);
      expect(throttled.operations).toEqual(['BatchGetItemCommand']);
    });
  });

  describe('two-step sign-in', () => {
    /** A new account signed in on a browser of its own, with an authenticator app (and the recovery codes shown) and a passkey. */
    async function guarded() {
      const { b, account } = await signedIn();
      const { secret, recoveryCodes } = await enrolAuthenticatorApp(b);
      const passkey = await addPasskey(b, account.user.id, 'Laptop');
      return { account, secret, recoveryCodes, passkey };
    }

    /** The password step of `account` on a new browser, from an address of its own: the browser and where it was sent. */
    async function passwordStep(account: Account) {
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      const reply = await signIn(b, account);
      expect(reply).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
      return { b, location: reply.location! };
    }

    it('POST /login, right password, a second factor enrolled: BatchGetItem + TransactWriteItems (reserve) + GetItem (user) + TransactWriteItems (pending sign-in, credit), no session', async () => {
      // Prepare
      const { account } = await guarded();
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      const form = await b.get('/login');

      // Act
      const { reply, operations } = await measure(() => b.postForm('/login', { ...formFields(form.text, '/login'), email: account.user.email, password: account.password }));

      // Assess: as many requests as a password-only login; the last write starts the pending sign-in instead of a session
      expect(reply).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
      expect(b.jar.get('session')).toBeUndefined();
      expect(b.jar.get('pending_sign_in')).toBeDefined();
      expect(operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand', 'GetItemCommand', 'TransactWriteItemsCommand']);
    });

    it.each(['the authenticator app’s code', 'a recovery code'])('POST /login/second-factor with %s: BatchGetItem (pending sign-in, factors, throttle record, known browser, user) + UpdateItem (reserve) + TransactWriteItems (session, code spent)', async (kind) => {
      // Prepare
      const { account, secret, recoveryCodes } = await guarded();
      const { b, location } = await passwordStep(account);
      const fields = formFields((await b.get(location)).text, '/login/second-factor');
      const code = kind === 'a recovery code' ? recoveryCodes[0]! : nextTotpCode(secret);

      // Act
      const { reply, operations } = await measure(() => b.postForm('/login/second-factor', { ...fields, code }));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/account' });
      expect(operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand']);
    });

    it('POST /login/passkey: BatchGetItem (address record, passkey, known browser, user) + UpdateItem (reserve) + DeleteItem (challenge) + TransactWriteItems (session)', async () => {
      // Prepare
      const { passkey } = await guarded();
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      const { challenge, rpId, fields } = await passkeySignInOptions(b);
      const response = passkey.answer(challenge, service.authUrl, rpId);

      // Act
      const { reply, operations } = await measure(() => b.postForm('/login/passkey', { ...fields, response }));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/account' });
      expect(operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand']);
    });

    it('GET /account/security: BatchGetItem (session, user, factors), then Query (passkeys) and Query on GSI1 (sessions) at once', async () => {
      // Prepare
      const { b, account } = await signedIn();
      await enrolAuthenticatorApp(b);
      await addPasskey(b, account.user.id, 'Laptop');

      // Act
      const { reply, operations } = await measure(() => b.get('/account/security'));

      // Assess
      expect(reply.status).toBe(200);
      expect(textOf(reply.text)).toContain('10 recovery codes left');
      expect(textOf(reply.text)).toContain('Laptop');
      expect(operations[0]).toBe('BatchGetItemCommand');
      expect(operations.slice(1)).toEqual(['QueryCommand', 'QueryCommand']);
    });

    it('POST /account/security/totp/remove: one BatchGetItem (session, user, factors, throttle record) + UpdateItem (reservation) + TransactWriteItems (the removal)', async () => {
      // Prepare
      const { b } = await signedIn();
      const { recoveryCodes } = await enrolAuthenticatorApp(b);
      const page = await b.get('/account/security');

      // Act
      const { reply, operations } = await measure(() => b.postForm('/account/security/totp/remove', { ...formFields(page.text, '/account/security/totp/remove'), code: recoveryCodes[0]! }));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/account/security?done=totp-removed' });
      expect(operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand']);
    });

    it('GET /account/security/totp, a first visit: one BatchGetItem (session, user, factors, enrolment) + PutItem (the enrolment); its reload: the BatchGetItem alone', async () => {
      // Prepare
      const { b } = await signedIn();

      // Act
      const first = await measure(() => b.get('/account/security/totp'));
      const reload = await measure(() => b.get('/account/security/totp'));

      // Assess
      expect(first.reply.status).toBe(200);
      expect(first.operations).toEqual(['BatchGetItemCommand', 'PutItemCommand']);
      expect(reload.operations).toEqual(['BatchGetItemCommand']);
      // The same enrolment: the reload shows the key the first visit made.
      const key = (page: string) => /id="totp-secret">([^<]+)</.exec(page)?.[1];
      expect(key(reload.reply.text)).toBe(key(first.reply.text));
    });
  });

  it('GET /developer: BatchGetItem (session, user) + Query (my applications)', async () => {
    // Prepare
    const { b } = await signedIn();
    const app = await registerApp(b);

    // Act
    const { reply, operations } = await measure(() => b.get('/developer'));

    // Assess
    expect(reply.status).toBe(200);
    expect(reply.text).toContain(app.clientId);
    expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand']);
  });

  it('GET /developer/apps/{client_id}: one BatchGetItem (session, user, application)', async () => {
    // Prepare
    const { b } = await signedIn();
    const app = await registerApp(b);

    // Act
    const { reply, operations } = await measure(() => b.get(`/developer/apps/${app.clientId}`));

    // Assess
    expect(reply.status).toBe(200);
    expect(reply.text).toContain(app.name);
    expect(operations).toEqual(['BatchGetItemCommand']);
  });

  describe('developer console', () => {
    it('POST /developer/apps: BatchGetItem (session, user) + TransactWriteItems (application, secret to show); GET of its secret page: BatchGetItem + DeleteItem', async () => {
      // Prepare
      const { b } = await signedIn();
      const fields = {
        ...formFields((await b.get('/developer')).text, '/developer/apps'),
        name: 'Counted app', description: '', website: 'https://counted.example', redirect_uris: 'https://counted.example/cb',
      };

      // Act
      const registration = await measure(() => b.postForm('/developer/apps', fields));
      const shown = await measure(() => b.get(registration.reply.location!));
      const again = await measure(() => b.get(registration.reply.location!));

      // Assess
      expect(registration.reply.status).toBe(303);
      expect(registration.operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
      expect(shown.reply.text).toContain('id="client-secret"');
      expect(shown.operations).toEqual(['BatchGetItemCommand', 'DeleteItemCommand']);
      // The key was cleared with the page: a reload reads only the page.
      expect(again.reply.text).not.toContain('id="client-secret"');
      expect(again.operations).toEqual(['BatchGetItemCommand']);
    });

    it('POST /developer/apps/{client_id}/secret: BatchGetItem + TransactWriteItems; /secret/retire: BatchGetItem + UpdateItem', async () => {
      // Prepare
      const { b } = await signedIn();
      const app = await registerApp(b);
      const base = `/developer/apps/${app.clientId}`;
      const rotateFields = { ...formFields((await b.get(base)).text, `${base}/secret`), confirm: 'yes' };

      // Act
      const rotation = await measure(() => b.postForm(`${base}/secret`, rotateFields));
      const retireFields = formFields((await b.get(base)).text, `${base}/secret/retire`);
      const retirement = await measure(() => b.postForm(`${base}/secret/retire`, retireFields));

      // Assess
      expect(rotation.reply.status).toBe(303);
      expect(rotation.operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
      expect(retirement.reply.status).toBe(303);
      expect(retirement.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
    });

    it('webhook: GET of the app page adds one Query (deliveries); registering, changing, rotating and removing cost one write each (+ the secret to show)', async () => {
      // Prepare: a public address as an IPv6 literal, so the URL check needs no DNS.
      const url = 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks';
      const { b } = await signedIn();
      const app = await registerApp(b);
      const base = `/developer/apps/${app.clientId}`;
      const fieldsOf = async (action: string, extra: Record<string, string>) => ({ ...formFields((await b.get(base)).text, action), ...extra });

      // Act and assess
      const registerFields = await fieldsOf(`${base}/webhook`, { webhook_url: url });
      const register = await measure(() => b.postForm(`${base}/webhook`, registerFields));
      const changeFields = await fieldsOf(`${base}/webhook`, { webhook_url: `${url}/2` });
      const change = await measure(() => b.postForm(`${base}/webhook`, changeFields));
      const page = await measure(() => b.get(base));
      const rotateFields = await fieldsOf(`${base}/webhook/secret`, { confirm: 'yes' });
      const rotation = await measure(() => b.postForm(`${base}/webhook/secret`, rotateFields));
      const removeFields = await fieldsOf(`${base}/webhook/delete`, { confirm: 'yes' });
      const removal = await measure(() => b.postForm(`${base}/webhook/delete`, removeFields));

      expect(register.reply.status).toBe(303);
      expect(register.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand', 'PutItemCommand']);
      expect(change.reply.status).toBe(303);
      expect(change.operations).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
      expect(page.reply.status).toBe(200);
      expect(page.operations).toEqual(['BatchGetItemCommand', 'QueryCommand']);
      expect(rotation.reply.status).toBe(303);
      expect(rotation.operations).toEqual(['BatchGetItemCommand', 'GetItemCommand', 'UpdateItemCommand', 'PutItemCommand']);
      expect(removal.reply.status).toBe(303);
      expect(removal.operations).toEqual(['BatchGetItemCommand', 'DeleteItemCommand']);
      // Without a webhook the page reads no deliveries.
      expect((await measure(() => b.get(base))).operations).toEqual(['BatchGetItemCommand']);
    });

    it('GET /developer/apps/{client_id}/delete: one BatchGetItem; its POST with a wrong name: one BatchGetItem, nothing written', async () => {
      // Prepare
      const { b } = await signedIn();
      const app = await registerApp(b);
      const path = `/developer/apps/${app.clientId}/delete`;

      // Act
      const confirmation = await measure(() => b.get(path));
      const wrong = await measure(() => b.postForm(path, { ...formFields(confirmation.reply.text, path), confirm_name: 'not the name' }));

      // Assess
      expect(confirmation.reply.status).toBe(200);
      expect(confirmation.operations).toEqual(['BatchGetItemCommand']);
      expect(wrong.reply.status).toBe(400);
      expect(wrong.operations).toEqual(['BatchGetItemCommand']);
    });
  });

  describe('GET /account', () => {
    it('with two authorized applications: BatchGetItem + Query (consents) + BatchGetItem (their applications)', async () => {
      // Prepare
      const developer = await signedIn();
      const apps = [await registerApp(developer.b), await registerApp(developer.b)];
      const { b, account } = await signedIn();
      for (const app of apps) await authorize(b, paramsFor(app), { account });

      // Act
      const { reply, operations } = await measure(() => b.get('/account'));

      // Assess
      expect(reply.status).toBe(200);
      for (const app of apps) expect(reply.text).toContain(`<h3>${app.name}</h3>`);
      expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand', 'BatchGetItemCommand']);
    });

    it('with no authorized application: no second BatchGetItem', async () => {
      // Prepare
      const { b } = await signedIn();

      // Act
      const { reply, operations } = await measure(() => b.get('/account'));

      // Assess
      expect(reply.status).toBe(200);
      expect(textOf(reply.text)).toContain('No application has access to your account.');
      expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand']);
    });
  });

  describe('the account’s data', () => {
    it('GET /account/delete of a developer of one application: BatchGetItem + Query (applications) + Query (who authorized it)', async () => {
      // Prepare
      const { b } = await signedIn();
      await registerApp(b);

      // Act
      const { reply, operations } = await measure(() => b.get('/account/delete'));

      // Assess
      expect(reply.status).toBe(200);
      expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand', 'QueryCommand']);
    });

    it('POST /account/delete with a wrong password: BatchGetItem + BatchGetItem (throttle) + TransactWriteItems (reserve) + GetItem (hash)', async () => {
      // Prepare
      const { b } = await signedIn();
      const fields = formFields((await b.get('/account/delete')).text, '/account/delete');

      // Act
      const { reply, operations } = await measure(() => b.postForm('/account/delete', { ...fields, password: 'not the password at all' }));

      // Assess
      expect(reply.status).toBe(401);
      expect(operations).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand', 'TransactWriteItemsCommand', 'GetItemCommand']);
    });

    it('POST /account/export of a user with nothing but a profile: BatchGetItem + 5 Queries (devices, consents, second factors, sessions, applications) and a GetItem at once, no second BatchGetItem', async () => {
      // Prepare
      const { b } = await signedIn();
      const fields = formFields((await b.get('/account')).text, '/account/export');

      // Act
      const { reply, operations } = await measure(() => b.postForm('/account/export', fields));

      // Assess
      expect(reply.status).toBe(200);
      expect(operations[0]).toBe('BatchGetItemCommand');
      expect(operations.slice(1).sort()).toEqual(['GetItemCommand', 'QueryCommand', 'QueryCommand', 'QueryCommand', 'QueryCommand', 'QueryCommand']);
    });
  });

  describe('ending a grant', () => {
    it('POST /account/apps/{client_id}/revoke with one active token family: BatchGetItem + DeleteItem (the consent, first) + Query (families) + TransactWriteItems', async () => {
      // Prepare
      const developer = await signedIn();
      const app = await registerApp(developer.b);
      const { b, account } = await signedIn();
      const familyId = await tokenFamily(b, account, app);
      const path = `/account/apps/${app.clientId}/revoke`;
      const fields = formFields((await b.get('/account')).text, path);

      // Act
      const { reply, operations } = await measure(() => b.postForm(path, fields));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/account' });
      expect(operations).toEqual(['BatchGetItemCommand', 'DeleteItemCommand', 'QueryCommand', 'TransactWriteItemsCommand']);
      expect((await repos.grants.getFamily(familyId))!.status).toBe('revoked');
      expect(await repos.grants.getConsent(account.user.id, app.clientId)).toBeUndefined();
      expect(await repos.clients.getClient(app.clientId)).toBeDefined();
    });

    it('POST /account/apps/{client_id}/revoke with a code never exchanged: BatchGetItem + DeleteItem (the consent) + Query + TransactWriteItems (the code ended)', async () => {
      // Prepare: authorized, code never exchanged
      const developer = await signedIn();
      const app = await registerApp(developer.b);
      const { b, account } = await signedIn();
      const code = (await authorize(b, paramsFor(app), { account })).searchParams.get('code')!;
      const path = `/account/apps/${app.clientId}/revoke`;
      const fields = formFields((await b.get('/account')).text, path);

      // Act
      const { reply, operations } = await measure(() => b.postForm(path, fields));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/account' });
      expect(operations).toEqual(['BatchGetItemCommand', 'DeleteItemCommand', 'QueryCommand', 'TransactWriteItemsCommand']);
      expect(await repos.grants.getFamily(grantTokenNames(code)!.familyId)).toMatchObject({ status: 'revoked' });
      expect(await repos.grants.getConsent(account.user.id, app.clientId)).toBeUndefined();
    });

    it('POST /developer/apps/{client_id}/delete with one token family and its consent: BatchGetItem (session, user, application) + Query + TransactWriteItems', async () => {
      // Prepare
      const developer = await signedIn();
      const app = await registerApp(developer.b);
      const user = await signedIn();
      const familyId = await tokenFamily(user.b, user.account, app);
      const path = `/developer/apps/${app.clientId}/delete`;
      const fields = { ...formFields((await developer.b.get(path)).text, path), confirm_name: app.name };

      // Act
      const { reply, operations } = await measure(() => developer.b.postForm(path, fields));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/developer' });
      expect(operations).toEqual(['BatchGetItemCommand', 'QueryCommand', 'TransactWriteItemsCommand']);
      expect((await repos.grants.getFamily(familyId))!.status).toBe('revoked');
      expect(await repos.grants.getConsent(user.account.user.id, app.clientId)).toBeUndefined();
      expect(await repos.clients.getClient(app.clientId)).toBeUndefined();
    });
  });

  describe('sign-up and e-mailed links', () => {
    /** Signs up a new address from a browser of its own; returns the browser, the reply, and what the POST cost. */
    async function signUp(email: string) {
      const b = new Browser(service.authUrl);
      const form = await b.get('/signup');
      const fields = { ...formFields(form.text, '/signup'), firstname: 'Grace', lastname: 'Hopper', email, password: 'a quiet lighthouse keeps the harbour', gender: '2' };
      return { b, ...(await measure(() => b.postForm('/signup', fields))) };
    }

    it('POST /signup with a new address: one TransactWriteItems (user, e-mail, confirmation link) + UpdateItem (the address\'s mail count), and the e-mailed link is that link', async () => {
      // Prepare
      const email = `counted-${randomUUID()}@example.com`;

      // Act
      const { reply, operations } = await signUp(email);

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/signup?done=signed-up' });
      expect(operations).toEqual(['TransactWriteItemsCommand', 'UpdateItemCommand']);
      const [mail, ...more] = await mailTo(service, email);
      expect(more).toEqual([]);
      expect(mail!.subject).toBe('Confirm your e-mail address');
      const created = await repos.users.findUserByEmail(email);
      expect(created!.user.email_confirmed).toBe(false);
      expect(await repos.links.peekLink('confirm-email', linkToken(service, mail!.text, '/confirm-email'))).toBe(created!.user.id);
    });

    it('POST /confirm-email: GetItem (link) + TransactWriteItems (link used up, address confirmed)', async () => {
      // Prepare
      const email = `counted-${randomUUID()}@example.com`;
      const { b } = await signUp(email);
      const token = linkToken(service, (await mailTo(service, email))[0]!.text, '/confirm-email');
      const page = await b.get(`/confirm-email?token=${token}`);
      expect(page.status).toBe(200);

      // Act
      const { reply, operations } = await measure(() => b.postForm('/confirm-email', formFields(page.text, '/confirm-email')));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/confirm-email?done=confirmed' });
      expect(operations).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
      expect((await repos.users.findUserByEmail(email))!.user.email_confirmed).toBe(true);
      expect(await repos.links.peekLink('confirm-email', token)).toBeUndefined();
    });

    it('POST /password-reset/confirm with two live sessions: GetItem (link) + GetItem (user) + Query (sessions) + TransactWriteItems', async () => {
      // Prepare: the account is signed in on two browsers
      const { b: first, account } = await signedIn();
      const second = new Browser(service.authUrl);
      expect((await signIn(second, account)).status).toBe(303);
      const anonymous = new Browser(service.authUrl);
      const request = await anonymous.get('/password-reset');
      expect((await anonymous.postForm('/password-reset', { ...formFields(request.text, '/password-reset'), email: account.user.email })).status).toBe(303);
      const [mail] = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = linkToken(service, mail!.text, '/password-reset/confirm');
      const page = await anonymous.get(`/password-reset/confirm?token=${token}`);
      expect(page.status).toBe(200);
      const newPassword = 'a brand new passphrase for grace';

      // Act
      // The box "also sign out every connected application" left unchecked: only the sessions end.
      const { sign_out_apps: _box, ...form } = formFields(page.text, '/password-reset/confirm');
      const { reply, operations } = await measure(() => anonymous.postForm('/password-reset/confirm', { ...form, password: newPassword }));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
      expect(operations).toEqual(['GetItemCommand', 'GetItemCommand', 'QueryCommand', 'TransactWriteItemsCommand']);
      for (const b of [first, second]) expect(await b.get('/account')).toMatchObject({ status: 302, location: '/login?return_to=%2Faccount' });
      expect(await repos.sessions.sessionKeysOf(account.user.id)).toEqual([]);
      expect(await repos.links.peekLink('reset-password', token)).toBeUndefined();
      expect((await signIn(new Browser(service.authUrl), { ...account, password: newPassword })).status).toBe(303);
    });

    it('POST /password-reset/confirm signing out two applications: + Query (consents) + per application DeleteItem (consent), Query (gsi1) and a TransactWriteItems for its families and codes', async () => {
      // Prepare: the account authorized two applications, one of them holds a refresh token, the other a code never exchanged
      const { b, account } = await signedIn();
      const developer = (await signedIn()).b;
      const [first, second] = [await registerApp(developer), await registerApp(developer)];
      await tokenFamily(b, account, first);
      await authorize(b, paramsFor(second), { account });
      const anonymous = new Browser(service.authUrl);
      const request = await anonymous.get('/password-reset');
      expect((await anonymous.postForm('/password-reset', { ...formFields(request.text, '/password-reset'), email: account.user.email })).status).toBe(303);
      const [mail] = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = linkToken(service, mail!.text, '/password-reset/confirm');
      const page = await anonymous.get(`/password-reset/confirm?token=${token}`);

      // Act
      const { reply, operations } = await measure(() => anonymous.postForm('/password-reset/confirm', {
        ...formFields(page.text, '/password-reset/confirm'), password: 'a brand new passphrase for grace', sign_out_apps: 'yes',
      }));

      // Assess: the applications' requests run side by side; each ends what it found (a family, a code) in a transaction
      expect(reply).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
      expect(operations.slice(0, 3)).toEqual(['GetItemCommand', 'GetItemCommand', 'QueryCommand']);
      expect(operations.slice(3, 9).sort()).toEqual([
        'DeleteItemCommand', 'DeleteItemCommand', 'QueryCommand', 'QueryCommand', 'TransactWriteItemsCommand', 'TransactWriteItemsCommand',
      ]);
      expect(operations.slice(9)).toEqual(['QueryCommand', 'TransactWriteItemsCommand']);
      expect(await repos.grants.listConsentsByUser(account.user.id)).toEqual([]);
    });
  });

  it.each(['/signup', '/login', '/account'])('anonymous GET %s with no session cookie: no request', async (path) => {
    // Act
    const { reply, operations } = await measure(() => new Browser(service.authUrl).get(path));

    // Assess
    expect(reply.status).toBe(path === '/account' ? 302 : 200);
    expect(operations).toEqual([]);
  });
});
