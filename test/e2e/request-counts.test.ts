import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalService } from '#infra/local/service';
import { countRequests } from '../support/count-requests';
import {
  authorizationParams, authorize, authorizePath, Browser, createAccount, formFields, nextLoopbackAddress, signIn, textOf,
  type Account, type Reply,
} from '../support/oauth-client';
import { startTestService } from '../support/service';

interface App {
  clientId: string;
  name: string;
  redirectUri: string;
}

/**
 * The DynamoDB requests one HTTP call to the authorization server costs, by operation and in
 * order, as the handlers' own client (shared/auth/runtime.ts) sends them.
 */
describe('DynamoDB requests per browser call', () => {
  let service: LocalService;
  let requests: ReturnType<typeof countRequests>;

  beforeAll(async () => {
    service = await startTestService();
    // The auth handlers' own client: imported after the service set the environment they read.
    const { doc } = await import('#shared/auth/runtime');
    requests = countRequests(doc);
  });
  afterAll(async () => {
    requests?.detach();
    await service?.stop();
  });
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
    const reply = await b.postForm('/developer/apps', {
      ...formFields(consolePage.text, '/developer/apps'), name, description: 'Counted.', website: 'https://app.example', redirect_uris: redirectUri,
    });
    expect(reply.status).toBe(200);
    const clientId = /id="client-id">([^<]+)</.exec(reply.text)?.[1];
    if (!clientId) throw new Error(`no client id on: ${textOf(reply.text).slice(0, 300)}`);
    return { clientId, name, redirectUri };
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
    expect(new URL(reply.location!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(operations).toEqual(['BatchGetItemCommand', 'PutItemCommand']);
  });

  it('GET /oauth/authorize, signed in, with no consent yet: one BatchGetItem for the consent page', async () => {
    // Prepare
    const { b } = await signedIn();

    // Act
    const { reply, operations } = await measure(() => b.get(authorizePath(authorizationParams())));

    // Assess
    expect(reply.status).toBe(200);
    expect(operations).toEqual(['BatchGetItemCommand']);
  });

  it('POST /oauth/authorize allow: BatchGetItem + TransactWriteItems (consent and code)', async () => {
    // Prepare
    const { b } = await signedIn();
    const page = await b.get(authorizePath(authorizationParams()));
    expect(page.status).toBe(200);

    // Act
    const { reply, operations } = await measure(() => b.postForm('/oauth/authorize', { ...formFields(page.text, '/oauth/authorize'), decision: 'allow' }));

    // Assess
    expect(reply.status).toBe(303);
    expect(new URL(reply.location!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(operations).toEqual(['BatchGetItemCommand', 'TransactWriteItemsCommand']);
  });

  describe('POST /login', () => {
    async function login(b: Browser, account: Account, password = account.password) {
      const form = await b.get('/login');
      return measure(() => b.postForm('/login', { ...formFields(form.text, '/login'), email: account.user.email, password }));
    }

    it('success: BatchGetItem (throttle records, e-mail) + GetItem (user) + PutItem (session)', async () => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const { reply, operations } = await login(new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() }), account);

      // Assess
      expect(reply.status).toBe(303);
      expect(operations).toEqual(['BatchGetItemCommand', 'GetItemCommand', 'PutItemCommand']);
    });

    it("success after a failure on the account: also a DeleteItem of the account's throttle record", async () => {
      // Prepare
      const account = await createAccount(service);
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      expect((await login(b, account, 'not the right password')).reply.status).toBe(401);

      // Act
      const { reply, operations } = await login(b, account);

      // Assess
      expect(reply.status).toBe(303);
      expect(operations).toEqual(['BatchGetItemCommand', 'GetItemCommand', 'DeleteItemCommand', 'PutItemCommand']);
    });

    it('success from an address with failures on another account: no DeleteItem', async () => {
      // Prepare
      const [other, account] = [await createAccount(service), await createAccount(service)];
      const b = new Browser(service.authUrl, { sourceAddress: nextLoopbackAddress() });
      expect((await login(b, other, 'not the right password')).reply.status).toBe(401);

      // Act
      const { reply, operations } = await login(b, account);

      // Assess
      expect(reply.status).toBe(303);
      expect(operations).toEqual(['BatchGetItemCommand', 'GetItemCommand', 'PutItemCommand']);
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

  it.each(['/signup', '/login', '/account'])('anonymous GET %s with no session cookie: no request', async (path) => {
    // Act
    const { reply, operations } = await measure(() => new Browser(service.authUrl).get(path));

    // Assess
    expect(reply.status).toBe(path === '/account' ? 302 : 200);
    expect(operations).toEqual([]);
  });
});
