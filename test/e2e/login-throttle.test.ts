import { randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand } from '#shared/data/commands';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { knownBrowserKey, throttleKey } from '#shared/data/item-keys';
import { Browser, createAccount, formFields, nextLoopbackAddress, signIn, type Reply } from '../support/oauth-client';
import { loosenAuthStorageLimit, useTable, useTestService } from '../support/service';

const COOKIE = 'known_browser';

/**
 * The login throttle over HTTP on the local service: every attempt reserves its failure before the
 * password is checked, per account and address, per account and per address; a browser that signed
 * in to the account before keeps its own count. The service runs in this process, on this process's
 * clock: tests stop time (vi.setSystemTime) so that no wait runs out while they look.
 */
describe('login throttle', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  // Twenty concurrent reservations (transactions) can keep DynamoDB Local, shared with the other test files, past 1 s.
  beforeAll(() => loosenAuthStorageLimit());
  afterEach(() => {
    vi.useRealTimers();
  });

  const browser = (sourceAddress = nextLoopbackAddress()) => new Browser(service.authUrl, { sourceAddress });
  const stopTime = () => vi.setSystemTime(Date.now());

  /** The stored item under a key, as DynamoDB Local holds it. */
  async function stored(key: { pk: string; sk: string }) {
    return (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;
  }
  const failuresOn = async (kind: 'account-address' | 'account' | 'address', subject: string) => Number((await stored(throttleKey(kind, subject)))?.failures ?? 0);

  /** Every throttle and known-browser item of the table. */
  async function throttleState() {
    const { Items = [] } = await doc.send(new ScanCommand({ TableName: service.tableName, ConsistentRead: true }));
    return Items.filter((item) => /^(THROTTLE|BROWSER)#/.test(String(item.pk))).sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
  }

  /** Every reply that is not a checked failure (401) is refused: 429 with a Retry-After. */
  function expectRefusedWithRetryAfter(replies: Reply[]) {
    const refused = replies.filter((r) => r.status !== 401);
    expect(refused.map((r) => r.status).filter((status) => status !== 429)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) expect(reply.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  }

  /** A browser's later visit: its session has ended, its other cookies (the known-browser one) remain. */
  const sessionEnded = (b: Browser) => b.jar.absorb(['session=; Max-Age=0']);

  /** Posts the login form of `b` (fetched first) with these credentials. */
  async function attempt(b: Browser, email: string, password: string): Promise<Reply> {
    const form = formFields((await b.get('/login')).text, '/login');
    return b.postForm('/login', { ...form, email, password });
  }

  /** `n` logins posted at once from `b` (its form fetched once): their answers. */
  async function concurrently(b: Browser, n: number, email: string, password: string): Promise<Reply[]> {
    const form = formFields((await b.get('/login')).text, '/login');
    return Promise.all(Array.from({ length: n }, () => b.postForm('/login', { ...form, email, password })));
  }

  describe('concurrent attempts buy no extra guesses', () => {
    it('checks at most 3 of 20 simultaneous wrong passwords from one address; the other 17 get 429 with Retry-After', async () => {
      // Prepare
      const account = await createAccount(service);
      const address = nextLoopbackAddress();
      stopTime();

      // Act
      const replies = await concurrently(browser(address), 20, account.user.email, 'not the right password');

      // Assess: an attempt reaches scrypt only after its failure is stored, so the stored counts bound the checks.
      const checked = replies.filter((r) => r.status === 401).length;
      const reserved = await failuresOn('account-address', `${account.user.email} ${address}`);
      expect(checked).toBeGreaterThanOrEqual(1);
      expect(reserved).toBeLessThanOrEqual(3);
      expect(checked).toBeLessThanOrEqual(reserved);
      expect(await failuresOn('account', account.user.email)).toBe(reserved);
      expect(await failuresOn('address', address)).toBe(reserved);
      expectRefusedWithRetryAfter(replies);
      // The free attempts are spent: even the right password waits now.
      if (reserved === 3) expect((await attempt(browser(address), account.user.email, account.password)).status).toBe(429);
    });

    it('checks at most 5 of 20 simultaneous wrong passwords sent with a stolen known-browser cookie, plus the 3 its address allows', async () => {
      // Prepare: the owner signs in once; a copy of the cookie is stolen.
      const account = await createAccount(service);
      const owner = browser();
      expect((await signIn(owner, account)).status).toBe(303);
      const thief = browser();
      thief.jar.set(COOKIE, owner.jar.get(COOKIE)!);
      stopTime();

      // Act
      const replies = await concurrently(thief, 20, account.user.email, 'not the right password');

      // Assess
      const checked = replies.filter((r) => r.status === 401).length;
      expect(checked).toBeLessThanOrEqual(5 + 3);
      expectRefusedWithRetryAfter(replies);
      expect((await stored(knownBrowserKey(hashSecret(decodeURIComponent(owner.jar.get(COOKIE)!)))))?.failures).toBeLessThanOrEqual(5);
    });
  });

  describe('nobody elsewhere can lock the owner out', () => {
    it('stops one address guessing at one account after 3 failures, while the owner signs in from another address', async () => {
      // Prepare
      const account = await createAccount(service);
      const attacker = browser();
      stopTime();
      const guesses = [];
      for (let i = 0; i < 4; i++) guesses.push(await attempt(attacker, account.user.email, `guess ${i}`));

      // Act: the owner, on a new browser elsewhere, with no known-browser cookie
      const owner = await signIn(browser(), account);

      // Assess
      expect(guesses.map((r) => r.status)).toEqual([401, 401, 401, 429]);
      expect(guesses[3]!.headers.get('retry-after')).toBe('1');
      expect(owner.status).toBe(303);
    });

    it('stops a distributed attack at the account-wide ceiling of 10, but lets a browser that signed in before keep signing in', async () => {
      // Prepare: the owner signed in once on her browser; then four addresses guess 3 times each.
      const account = await createAccount(service);
      const ownersBrowser = browser();
      expect((await signIn(ownersBrowser, account)).status).toBe(303);
      sessionEnded(ownersBrowser);
      stopTime();
      const statuses: number[] = [];
      for (let a = 0; a < 4; a++) {
        const attacker = browser();
        for (let i = 0; i < 3; i++) statuses.push((await attempt(attacker, account.user.email, `guess ${a}.${i}`)).status);
      }

      // Act
      const newBrowserElsewhere = await signIn(browser(), account);
      const knownBrowser = await signIn(ownersBrowser, account);

      // Assess
      expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
      expect(newBrowserElsewhere.status).toBe(429);
      expect(newBrowserElsewhere.headers.get('retry-after')).toBe('1');
      expect(newBrowserElsewhere.setCookies.some((c) => c.startsWith('session='))).toBe(false);
      expect(knownBrowser.status).toBe(303);
      expect(knownBrowser.setCookies.some((c) => c.startsWith('session='))).toBe(true);
    });

    it('keeps the known browser signing in even from the attacking address, whose own limits hold everyone else', async () => {
      // Prepare: owner and attacker share an address (one NAT); the attacker spends the account's and the address's allowance.
      const account = await createAccount(service);
      const shared = nextLoopbackAddress();
      const ownersBrowser = browser(shared);
      expect((await signIn(ownersBrowser, account)).status).toBe(303);
      sessionEnded(ownersBrowser);
      stopTime();
      for (let i = 0; i < 10; i++) await attempt(browser(shared), i < 3 ? account.user.email : `other-${i}-${randomUUID()}@example.com`, 'guess');
      const neighbour = await createAccount(service);

      // Act
      const owner = await signIn(ownersBrowser, account);
      const neighbourOnANewBrowser = await signIn(browser(shared), neighbour);

      // Assess
      expect(owner.status).toBe(303);
      expect(neighbourOnANewBrowser.status).toBe(429);
    });

    it('stops one address trying many accounts after 10 failures', async () => {
      // Prepare
      const address = nextLoopbackAddress();
      stopTime();
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await attempt(browser(address), `sprayed-${i}-${randomUUID()}@example.com`, 'Summer2026!')).status);

      // Act
      const another = await signIn(browser(address), await createAccount(service));

      // Assess
      expect(statuses).toEqual([...Array(10).fill(401), 429]);
      expect(another.status).toBe(429);
    });
  });

  describe('the known-browser cookie', () => {
    it('is set at a successful login: HttpOnly, SameSite, for the login path, 30 days; only its hash is stored, bound to the account', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = browser();

      // Act
      const reply = await signIn(b, account);

      // Assess
      const cookie = reply.setCookies.find((c) => c.startsWith(`${COOKIE}=`))!;
      expect(cookie).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}; Path=/login; HttpOnly; SameSite=Lax; Max-Age=2592000$`));
      const token = decodeURIComponent(b.jar.get(COOKIE)!);
      const item = await stored(knownBrowserKey(hashSecret(token)));
      expect(item).toMatchObject({ userId: account.user.id, failures: 0 });
      expect(JSON.stringify(await throttleState())).not.toContain(token);
      expect(Number(item!.expiresAt) - Math.floor(Date.now() / 1000)).toBeGreaterThan(30 * 86_400 - 60);
    });

    it('is replaced at each login: the old value, or a copy of it, is worth nothing afterwards', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = browser();
      expect((await signIn(b, account)).status).toBe(303);
      sessionEnded(b);
      const old = decodeURIComponent(b.jar.get(COOKIE)!);

      // Act
      expect((await signIn(b, account)).status).toBe(303);

      // Assess
      const now = decodeURIComponent(b.jar.get(COOKIE)!);
      expect(now).not.toBe(old);
      expect(await stored(knownBrowserKey(hashSecret(old)))).toBeUndefined();
      expect(await stored(knownBrowserKey(hashSecret(now)))).toMatchObject({ userId: account.user.id });
    });

    it('allows 5 failures, then no longer lifts the account-wide limit', async () => {
      // Prepare: the account is under a distributed attack (10 failures); the owner's browser mistypes.
      const account = await createAccount(service);
      const b = browser();
      expect((await signIn(b, account)).status).toBe(303);
      sessionEnded(b);
      stopTime();
      for (let a = 0; a < 4; a++) for (let i = 0; i < 3 && a * 3 + i < 10; i++) await attempt(browser(), account.user.email, 'guess');
      const typos = [];
      for (let i = 0; i < 5; i++) typos.push((await attempt(b, account.user.email, `typo ${i}`)).status);

      // Act
      const sixth = await signIn(b, account);

      // Assess
      expect(typos).toEqual([401, 401, 401, 401, 401]);
      expect(sixth.status).toBe(429);
    });

    it.each([
      ['a bad percent-escape', '%E0%A4%A'],
      ['the wrong length', 'abc'],
      ['a forged value of the right shape', randomToken()],
      ['another account\'s cookie', 'OTHER'],
    ])('with %s is ignored: no 500, and no way past the account-wide limit', async (_, value) => {
      // Prepare: the account-wide limit is reached.
      const account = await createAccount(service);
      const other = await createAccount(service);
      const otherBrowser = browser();
      expect((await signIn(otherBrowser, other)).status).toBe(303);
      stopTime();
      for (let a = 0; a < 4; a++) for (let i = 0; i < 3 && a * 3 + i < 10; i++) await attempt(browser(), account.user.email, 'guess');
      const b = browser();
      b.jar.set(COOKIE, value === 'OTHER' ? otherBrowser.jar.get(COOKIE)! : value);

      // Act
      const wrong = await attempt(b, account.user.email, 'guess');
      const right = await signIn(b, account);

      // Assess
      expect(wrong.status).toBe(429);
      expect(right.status).toBe(429);
      vi.useRealTimers();
      const elsewhere = browser();
      elsewhere.jar.set(COOKIE, value === 'OTHER' ? otherBrowser.jar.get(COOKIE)! : value);
      expect((await signIn(elsewhere, other)).status).toBe(303);
    });
  });

  describe('a refused request changes nothing', () => {
    it('leaves every throttle record and known browser as it was when it answers 429, or refuses the form', async () => {
      // Prepare
      const account = await createAccount(service);
      const address = nextLoopbackAddress();
      const known = browser(address);
      expect((await signIn(known, account)).status).toBe(303);
      sessionEnded(known);
      stopTime();
      for (let i = 0; i < 3; i++) await attempt(browser(address), account.user.email, 'guess');
      const before = await throttleState();

      // Act
      const throttled = await attempt(browser(address), account.user.email, account.password);
      const noCsrf = await known.postForm('/login', { email: account.user.email, password: 'guess' });

      // Assess
      expect(throttled.status).toBe(429);
      expect(noCsrf.status).toBe(403);
      expect(await throttleState()).toEqual(before);
    });
  });
});
