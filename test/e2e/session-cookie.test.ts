import { DeleteCommand, GetCommand, PutCommand } from '#shared/data/commands';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { hashSecret, randomToken } from '#shared/secrets';
import { sessionKey, sessionsOfUserIndexKey, userKey } from '#shared/data/item-keys';
import { SESSION_TTL_SECONDS } from '#shared/data/session-repo';
import { epochSeconds } from '#shared/domain/time';
import { countRequests } from '../support/count-requests';
import { type Account, authorizationParams, authorize, authorizePath, Browser, CODE_SHAPE, createAccount, formFields, type Reply, signIn } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

const LOGIN_REDIRECT = '/login?return_to=%2Faccount';

describe('session cookie', () => {
  const service = useTestService();
  const { doc, repos: { sessions } } = useTable(service);
  let requests: ReturnType<typeof countRequests>;

  beforeAll(async () => {
    // The auth handlers' own client: imported after the service set the environment they read.
    const runtime = await import('#shared/runtime');
    requests = countRequests(runtime.doc);
  });
  afterAll(() => requests?.detach());
  beforeEach(() => requests.reset());

  /** A browser that sends only this session cookie. */
  function withCookie(value: string): Browser {
    const b = new Browser(service.authUrl);
    b.jar.set('session', value);
    return b;
  }

  /** A browser signed in through the login form as a new account of its own, and its session cookie. */
  async function signedIn(): Promise<{ b: Browser; account: Account; cookie: string }> {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    const login = await signIn(b, account);
    expect(login.status).toBe(303);
    return { b, account, cookie: b.jar.get('session')! };
  }

  /** Whether GET /account showed the account page of `account`. */
  function expectAccountPageOf(reply: Reply, account: Account) {
    expect(reply.status).toBe(200);
    expect(reply.text).toContain(account.user.email);
  }

  function expectSignedOut(reply: Reply) {
    expect(reply).toMatchObject({ status: 302, location: LOGIN_REDIRECT });
  }

  it('is `<user id>.<43 base64url characters>`, stored only under the hash of the whole value', async () => {
    // Act
    const { b, account, cookie } = await signedIn();
    requests.reset();
    const page = await b.get('/account');

    // Assess
    expect(cookie).toMatch(new RegExp(`^${account.user.id}\\.[A-Za-z0-9_-]{43}$`));
    expectAccountPageOf(page, account);
    expect(requests.operations).toEqual(['BatchGetItemCommand', 'QueryCommand']);
    const { Item } = await doc.send(new GetCommand({ TableName: service.tableName, Key: sessionKey(hashSecret(cookie)) }));
    expect(Item).toMatchObject({ userId: account.user.id });
    expect(JSON.stringify(Item)).not.toContain(cookie.split('.')[1]);
  });

  describe('another user id in front of a real random part', () => {
    it('signs nobody in, though both users exist and are signed in', async () => {
      // Prepare
      const alice = await signedIn();
      const bob = await signedIn();
      const random = alice.cookie.slice(alice.cookie.indexOf('.') + 1);
      const swapped = `${bob.account.user.id}.${random}`;

      // Act
      const asSwapped = await withCookie(swapped).get('/account');
      const asAlice = await alice.b.get('/account');
      const asBob = await bob.b.get('/account');

      // Assess
      expectSignedOut(asSwapped);
      expectAccountPageOf(asAlice, alice.account);
      expectAccountPageOf(asBob, bob.account);
    });

    it("gets no code from the authorization endpoint, even for a user who consented (the other's random part)", async () => {
      // Prepare: Alice consented to the demo client; Bob is signed in
      const alice = await signedIn();
      await authorize(alice.b, authorizationParams(), { account: alice.account });
      const bob = await signedIn();
      const bobRandom = bob.cookie.slice(bob.cookie.indexOf('.') + 1);
      const params = authorizationParams();

      // Act
      const reply = await withCookie(`${alice.account.user.id}.${bobRandom}`).get(authorizePath(params));
      const asAlice = await alice.b.get(authorizePath(params));

      // Assess
      expect(reply.status).toBe(302);
      expect(reply.location).toBe(`/login?return_to=${encodeURIComponent(authorizePath(params))}`);
      expect(new URL(asAlice.location!).searchParams.get('code')).toMatch(CODE_SHAPE);
      expect(asAlice.location!.startsWith(`${DEMO_CLIENT.redirectUris[0]}?`)).toBe(true);
    });

    it('signs nobody in when a stored session under the hash of the cookie names another user', async () => {
      // Prepare: a session item for `<bob>.<random>` that names Alice
      const alice = await createAccount(service);
      const bob = await createAccount(service);
      const cookie = `${bob.user.id}.${randomToken()}`;
      const hash = hashSecret(cookie);
      await doc.send(new PutCommand({
        TableName: service.tableName,
        Item: { ...sessionKey(hash), ...sessionsOfUserIndexKey(alice.user.id, hash), userId: alice.user.id, expiresAt: epochSeconds(new Date()) + 3600 },
      }));

      // Act
      const reply = await withCookie(cookie).get('/account');

      // Assess
      expectSignedOut(reply);
      expect(requests.operations).toEqual(['BatchGetItemCommand']);
    });
  });

  describe('a malformed cookie signs nobody in and costs no DynamoDB request', () => {
    it('an old-style value (43 random characters, no user id), even with a live session stored under its hash', async () => {
      // Prepare: a session as stored before the user id was part of the cookie
      const account = await createAccount(service);
      const old = randomToken();
      const hash = hashSecret(old);
      await doc.send(new PutCommand({
        TableName: service.tableName,
        Item: { ...sessionKey(hash), ...sessionsOfUserIndexKey(account.user.id, hash), userId: account.user.id, expiresAt: epochSeconds(new Date()) + 3600 },
      }));
      requests.reset();

      // Act
      const reply = await withCookie(old).get('/account');

      // Assess
      expect(old).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expectSignedOut(reply);
      expect(requests.operations).toEqual([]);
    });

    it.each([
      ['no dot', (id: string, token: string) => `${id}${token}`],
      ['a random part one character short', (id: string, token: string) => `${id}.${token.slice(1)}`],
      ['a random part one character long', (id: string, token: string) => `${id}.${token}A`],
      ['no user id', (_: string, token: string) => `.${token}`],
      ['a user id of 65 characters', (_: string, token: string) => `${'a'.repeat(65)}.${token}`],
      ['a colon instead of the dot', (id: string, token: string) => `${id}:${token}`],
      ['two dots', (id: string, token: string) => `${id}.${id}.${token}`],
    ])('%s', async (_, shape) => {
      // Prepare: a real session, its cookie reshaped
      const { cookie, account } = await signedIn();
      const malformed = shape(account.user.id, cookie.slice(cookie.indexOf('.') + 1));
      requests.reset();

      // Act
      const reply = await withCookie(malformed).get('/account');

      // Assess
      expectSignedOut(reply);
      expect(requests.operations).toEqual([]);
    });
  });

  describe('a cookie with a malformed percent-escape is ignored as absent', () => {
    const BAD = '%E0%A4%A';

    it('a session cookie: the pages answer as to a visitor without one', async () => {
      // Act
      const b = withCookie(BAD);
      const account = await b.get('/account');
      const login = await b.get('/login');
      const authorizePage = await b.get(authorizePath(authorizationParams()));
      const developer = await b.get('/developer');

      // Assess
      expectSignedOut(account);
      expect(login.status).toBe(200);
      expect(authorizePage).toMatchObject({ status: 302 });
      expect(authorizePage.location).toMatch(/^\/login\?return_to=/);
      expect(developer).toMatchObject({ status: 302, location: '/login?return_to=%2Fdeveloper' });
    });

    it('a session cookie on logout: the browser is signed out, and no session of anyone is touched', async () => {
      // Prepare: a real session elsewhere, and a logout form with the token the page gives the bad cookie
      const other = await signedIn();
      const b = new Browser(service.authUrl);
      b.jar.set('session', BAD);
      const fields = formFields((await b.get('/login')).text, '/login');

      // Act
      const out = await b.postForm('/logout', { csrf: fields.csrf! });

      // Assess
      expect(out).toMatchObject({ status: 303, location: '/login' });
      expectAccountPageOf(await other.b.get('/account'), other.account);
    });

    it('a CSRF cookie: a page issues a new token, and a form posted with the bad cookie is refused (403), not a 500', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = new Browser(service.authUrl);
      b.jar.set('csrf', BAD);

      // Act
      const form = await b.postForm('/login', { csrf: BAD, email: account.user.email, password: account.password });
      b.jar.set('csrf', BAD);
      const page = await b.get('/login');

      // Assess
      expect(form.status).toBe(403);
      expect(form.setCookies.some((c) => c.startsWith('session='))).toBe(false);
      expect(page.status).toBe(200);
      const issued = page.setCookies.find((c) => c.startsWith('csrf='));
      expect(issued).toMatch(/^csrf=[A-Za-z0-9_-]{43};/);
      expect(formFields(page.text, '/login').csrf).toBe(b.jar.get('csrf'));
      const login = await b.postForm('/login', { ...formFields(page.text, '/login'), email: account.user.email, password: account.password });
      expect(login).toMatchObject({ status: 303, location: '/account' });
    });
  });

  describe('a well-formed cookie of a session that is not live', () => {
    it('an expired session signs nobody in; one started now does', async () => {
      // Prepare
      const account = await createAccount(service);
      const expired = await sessions.createSession(account.user.id, new Date(Date.now() - (SESSION_TTL_SECONDS + 60) * 1000));
      const live = await sessions.createSession(account.user.id);
      requests.reset();

      // Act
      const withExpired = await withCookie(expired).get('/account');
      const expiredCost = [...requests.operations];
      const withLive = await withCookie(live).get('/account');

      // Assess
      expectSignedOut(withExpired);
      expect(expiredCost).toEqual(['BatchGetItemCommand']);
      expectAccountPageOf(withLive, account);
    });

    it('a session whose user no longer exists signs nobody in', async () => {
      // Prepare
      const { account, cookie } = await signedIn();
      await doc.send(new DeleteCommand({ TableName: service.tableName, Key: userKey(account.user.id) }));

      // Act
      const reply = await withCookie(cookie).get('/account');

      // Assess
      expectSignedOut(reply);
    });

    it('after logout the same cookie signs nobody in, and its session item is gone', async () => {
      // Prepare
      const { b, account, cookie } = await signedIn();
      const page = await b.get('/account');
      expectAccountPageOf(page, account);

      // Act
      const out = await b.postForm('/logout', formFields(page.text, '/logout'));
      const replayed = await withCookie(cookie).get('/account');

      // Assess
      expect(out).toMatchObject({ status: 303, location: '/login' });
      expectSignedOut(replayed);
      const { Item } = await doc.send(new GetCommand({ TableName: service.tableName, Key: sessionKey(hashSecret(cookie)) }));
      expect(Item).toBeUndefined();
    });
  });
  describe('a page\'s reads of the user\'s own items (ofUser), made with the session by the user id its cookie names', () => {
    /** readPage of a request with this session cookie, whose ofUser read answers the user item's e-mail address. */
    async function readOwnAddress(cookie: string) {
      const { readPage } = await import('#shared/pages/session');
      const event = { cookies: [`session=${cookie}`], headers: {} } as unknown as Parameters<typeof readPage>[0];
      requests.reset();
      const read = await readPage(event, { ofUser: (userId) => ({ keys: [userKey(userId)], parse: ([item]) => item?.email }) });
      return { read, operations: [...requests.operations] };
    }

    it('answer a live session of that user, in the session\'s BatchGetItem', async () => {
      const { account, cookie } = await signedIn();
      const { read, operations } = await readOwnAddress(cookie);
      expect(read.signedIn?.user.id).toBe(account.user.id);
      expect(read.ofUser).toBe(account.user.email);
      expect(operations).toEqual(['BatchGetItemCommand']);
    });

    it('answer nothing for a cookie that names a user but no session of hers, or a session that ended', async () => {
      const { account, cookie } = await signedIn();
      const forged = `${account.user.id}.${randomToken()}`;
      await sessions.deleteSession(cookie);
      for (const value of [forged, cookie]) {
        const { read } = await readOwnAddress(value);
        expect(read.signedIn).toBeUndefined();
        expect(read).not.toHaveProperty('ofUser');
      }
    });
  });
  describe('the account pages anyone may open', () => {
    // Sign-up and e-mail confirmation need no session, but a signed-in visitor's page reads it (one
    // BatchGetItem) to show who is signed in, on the form and on the answer to its post.
    it('show the signed-in visitor, read in one BatchGetItem, on GET and POST alike', async () => {
      const { b, account } = await signedIn();
      const csrf = formFields((await b.get('/signup')).text, '/signup');
      const pages: [string, () => Promise<Reply>][] = [
        ['GET /signup', () => b.get('/signup')],
        ['POST /signup', () => b.postForm('/signup', { ...csrf, email: 'not an address' })],
        ['GET /confirm-email', () => b.get(`/confirm-email?token=${randomToken()}`)],
        ['POST /confirm-email', () => b.postForm('/confirm-email', { ...csrf, token: randomToken() })],
      ];
      for (const [name, open] of pages) {
        requests.reset();
        const reply = await open();
        expect(reply.status, name).toBeLessThan(500);
        expect(reply.text, name).toContain(account.user.email);
        expect(requests.operations[0], name).toBe('BatchGetItemCommand');
      }
    });
  });
});
