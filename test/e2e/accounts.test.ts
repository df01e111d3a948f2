import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '#local/service';
import { hashSecret, randomToken } from '#shared/auth/secrets';
import { createDocumentClient } from '#shared/data/dynamodb';
import { readOutbox } from '#shared/email/outbox-mailer';
import {
  authorizationParams, authorize, authorizePath, Browser, createAccount, formFields, nextLoopbackAddress, signIn, textOf,
  type Account, type Reply,
} from '../support/oauth-client';
import { createRepos, type Repos } from '../support/repos';
import { startTestService } from '../support/service';

const PASSPHRASE = 'a quiet lighthouse keeps the harbour';

interface App {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUri: string;
}

describe('accounts and developer console over HTTP', () => {
  let service: LocalService;
  let doc: ReturnType<typeof createDocumentClient>;
  let repos: Repos;

  beforeAll(async () => {
    service = await startTestService();
    doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
    const deps = { doc, table: service.tableName };
    repos = createRepos(deps);
  });

  afterAll(async () => {
    doc?.destroy();
    await service?.stop();
  });

  /** A browser of the authorization server; failed logins go from an address of their own so they throttle no other test. */
  const browser = (sourceAddress?: string) => new Browser(service.authUrl, sourceAddress ? { sourceAddress } : {});

  /** The e-mail the local service sent to an address, oldest first. */
  async function mailTo(address: string) {
    return (await readOutbox(service.outboxDir)).filter((m) => m.to === address).reverse();
  }

  /** The token of the first link to `path` in a message. */
  function linkToken(text: string, path: string): string {
    const match = new RegExp(`${service.authUrl}${path}\\?token=([A-Za-z0-9_-]+)`).exec(text);
    if (!match) throw new Error(`no ${path} link in: ${text}`);
    return match[1]!;
  }

  /** GETs a page and posts its form to `action` with `fields` added. */
  async function submit(b: Browser, pagePath: string, action: string, fields: Record<string, string>): Promise<Reply> {
    const form = await b.get(pagePath);
    expect(form.status).toBe(200);
    return b.postForm(action, { ...formFields(form.text, action), ...fields });
  }

  function signupFields(email: string) {
    return { firstname: 'Grace', lastname: 'Hopper', email, password: PASSPHRASE, gender: '2' };
  }

  /** A signed-in browser of a new (confirmed) account. */
  async function signedIn(): Promise<{ b: Browser; account: Account }> {
    const account = await createAccount(service);
    const b = browser();
    const login = await signIn(b, account);
    expect(login.status).toBe(303);
    return { b, account };
  }

  /** Registers an application in the console; returns the credentials the secret page shows once. */
  async function registerApp(b: Browser, overrides: Record<string, string> = {}): Promise<App> {
    const name = `App ${randomUUID().slice(0, 8)}`;
    const redirectUri = `https://${name.replace(' ', '-').toLowerCase()}.example/callback`;
    const reply = await submit(b, '/developer', '/developer/apps', {
      name, description: 'Registered by the accounts tests.', website: 'https://app.example', redirect_uris: redirectUri, ...overrides,
    });
    expect(reply.status).toBe(200);
    return { ...secretOf(reply), name: overrides.name ?? name, redirectUri: overrides.redirect_uris ?? redirectUri };
  }

  function secretOf(reply: Reply): { clientId: string; clientSecret: string } {
    const clientId = /id="client-id">([^<]+)</.exec(reply.text)?.[1];
    const clientSecret = /id="client-secret">([^<]+)</.exec(reply.text)?.[1];
    if (!clientId || !clientSecret) throw new Error(`no credentials on: ${textOf(reply.text).slice(0, 300)}`);
    return { clientId, clientSecret };
  }

  async function tokenRequest(app: Pick<App, 'clientId' | 'clientSecret'>, params: Record<string, string>) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...params, client_id: app.clientId, client_secret: app.clientSecret }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  /** The user (signed in on `b`) authorizes the app; returns the tokens of the code exchange. */
  async function tokensFor(b: Browser, account: Account, app: App, scope = 'read_user') {
    const callback = await authorize(b, authorizationParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope }), { account });
    const exchange = await tokenRequest(app, { grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: app.redirectUri });
    expect(exchange.status).toBe(200);
    return exchange.body as { access_token: string; refresh_token: string };
  }

  describe('login throttle', () => {
    /** Wrong-password attempts with waits in between; what each answer was, with the address blanked out. */
    async function failureSequence(email: string) {
      const b = browser(nextLoopbackAddress());
      const answers: { status: number; retryAfter: string | null; text: string }[] = [];
      // One form for all attempts: each attempt is then a single request, so the next one follows a failure closely.
      const form = formFields((await b.get('/login')).text, '/login');
      const attempt = async () => {
        const reply = await b.postForm('/login', { ...form, email, password: 'not the right password' });
        answers.push({ status: reply.status, retryAfter: reply.headers.get('retry-after'), text: textOf(reply.text).replaceAll(email, '<email>') });
        return reply;
      };
      for (let i = 0; i < 3; i++) await attempt();
      for (let round = 0; round < 2; round++) {
        const refused = await attempt();
        await new Promise((resolve) => setTimeout(resolve, Number(refused.headers.get('retry-after')) * 1000 + 150));
        await attempt();
      }
      await attempt();
      return answers;
    }

    it('answers 429 with a Retry-After after 3 failures, doubling from 1 s once each wait has passed, alike for an unknown account', async () => {
      const known = await createAccount(service);
      const unknown = `nobody-${randomUUID()}@example.com`;

      const [forKnown, forUnknown] = await Promise.all([failureSequence(known.user.email), failureSequence(unknown)]);

      expect(forKnown.map((a) => [a.status, a.retryAfter])).toEqual([
        [401, null], [401, null], [401, null],
        [429, '1'], [401, null],
        [429, '2'], [401, null],
        [429, '4'],
      ]);
      expect(forKnown[0]!.text).toContain('Incorrect e-mail address or password.');
      expect(forKnown[3]!.text).toContain('Too many failed attempts. Try again in 1 second.');
      expect(forKnown[7]!.text).toContain('Too many failed attempts. Try again in 4 seconds.');
      // No enumeration: an unknown account gets exactly the same answers.
      expect(forUnknown).toEqual(forKnown);
    });

    it('holds the account from every address and the address for every account, even with the right password', async () => {
      const victim = await createAccount(service);
      const attacker = nextLoopbackAddress();
      for (let i = 0; i < 3; i++) {
        expect((await signIn(browser(attacker), { ...victim, password: 'guess' })).status).toBe(401);
      }

      const rightPasswordElsewhere = await signIn(browser(nextLoopbackAddress()), victim);
      const otherAccountSameAddress = await signIn(browser(attacker), await createAccount(service));

      expect(rightPasswordElsewhere.status).toBe(429);
      expect(rightPasswordElsewhere.setCookies.some((c) => c.startsWith('session='))).toBe(false);
      expect(otherAccountSameAddress.status).toBe(429);
    });

    it('grows the delay with the failure count once the previous wait has passed, up to 15 minutes', async () => {
      const account = await createAccount(service);
      const address = nextLoopbackAddress();
      const b = browser(address);
      const form = formFields((await b.get('/login')).text, '/login');
      const attempt = (password: string) => b.postForm('/login', { ...form, email: account.user.email, password });
      // Five failures a minute ago: their 4-second wait is over.
      for (let i = 0; i < 5; i++) await repos.throttle.recordFailure(account.user.email, address, Date.now() - 60_000);

      const allowed = await attempt('guess');
      const held = await attempt('guess');
      const records = await repos.throttle.getFailures(account.user.email, address);
      for (let i = 0; i < 20; i++) await repos.throttle.recordFailure(account.user.email, address, Date.now());
      const capped = await attempt(account.password);

      expect(allowed.status).toBe(401);
      expect(records.map((r) => r.failures)).toEqual([6, 6]);
      expect(held.status).toBe(429);
      // 8 s from the sixth failure, less the moments since: more than the fifth failure's 4 s.
      expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(4);
      expect(Number(held.headers.get('retry-after'))).toBeLessThanOrEqual(8);
      expect(capped.status).toBe(429);
      expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(890);
      expect(Number(capped.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    });
  });

  describe('no account enumeration by e-mail', () => {
    it('answers a sign-up with a used address like a new one, and mails the owner a notice instead of a link', async () => {
      const owner = await createAccount(service);
      const fresh = `new-${randomUUID()}@example.com`;

      const taken = await submit(browser(), '/signup', '/signup', signupFields(owner.user.email.toUpperCase()));
      const created = await submit(browser(), '/signup', '/signup', signupFields(fresh));

      expect(taken.status).toBe(200);
      expect(created.status).toBe(200);
      expect(textOf(taken.text)).toBe(textOf(created.text));
      expect(textOf(taken.text)).toContain('Check your e-mail');
      const [notice, ...moreToOwner] = await mailTo(owner.user.email);
      expect(moreToOwner).toEqual([]);
      expect(notice!.subject).toBe('Someone tried to create an account with your address');
      expect(notice!.text).not.toContain('/confirm-email');
      expect(notice!.text).toContain(`${service.authUrl}/password-reset`);
      const [confirmation] = await mailTo(fresh);
      expect(confirmation!.subject).toBe('Confirm your e-mail address');
      expect(linkToken(confirmation!.text, '/confirm-email')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The owner's account is untouched: the old password still works.
      expect((await signIn(browser(), owner)).status).toBe(303);
    });

    it('answers a reset request for an unknown address like a known one, and sends nothing', async () => {
      const owner = await createAccount(service);
      const unknown = `nobody-${randomUUID()}@example.com`;
      const before = (await readOutbox(service.outboxDir)).length;

      const forUnknown = await submit(browser(), '/password-reset', '/password-reset', { email: unknown });
      const afterUnknown = (await readOutbox(service.outboxDir)).length;
      const forKnown = await submit(browser(), '/password-reset', '/password-reset', { email: owner.user.email });

      expect(forUnknown.status).toBe(200);
      expect(forKnown.status).toBe(200);
      expect(textOf(forUnknown.text)).toBe(textOf(forKnown.text));
      expect(afterUnknown).toBe(before);
      expect(await mailTo(unknown)).toEqual([]);
      const [reset] = await mailTo(owner.user.email);
      expect(reset!.subject).toBe('Reset your password');
    });

    it('answers an address too long for any account (and for a key) like any unknown one, at login and at reset', async () => {
      // Sign-up refuses addresses over 254 characters; 3,000 would not even fit in a DynamoDB key.
      const huge = `${'a'.repeat(3000)}@example.com`;
      const b = browser(nextLoopbackAddress());
      const login = formFields((await b.get('/login')).text, '/login');
      const unknownLogin = await b.postForm('/login', { ...login, email: `nobody-${randomUUID()}@example.com`, password: 'not the right password' });
      const hugeLogin = await b.postForm('/login', { ...login, email: huge, password: 'not the right password' });
      const forUnknown = await submit(browser(), '/password-reset', '/password-reset', { email: `nobody-${randomUUID()}@example.com` });
      const forHuge = await submit(browser(), '/password-reset', '/password-reset', { email: huge });

      expect(unknownLogin.status).toBe(401);
      expect(hugeLogin.status).toBe(401);
      expect(textOf(hugeLogin.text)).toContain('Incorrect e-mail address or password.');
      expect(forHuge.status).toBe(200);
      expect(textOf(forHuge.text)).toBe(textOf(forUnknown.text));
    });
  });

  describe('e-mail confirmation link', () => {
    it('confirms nothing on GET (link scanners), confirms on POST, and works once', async () => {
      const email = `confirm-${randomUUID()}@example.com`;
      const b = browser();
      await submit(b, '/signup', '/signup', signupFields(email));
      const token = linkToken((await mailTo(email))[0]!.text, '/confirm-email');
      const path = `/confirm-email?token=${token}`;

      const shown = await b.get(path);
      const unconfirmed = await repos.users.findUserByEmail(email);
      const confirmed = await b.postForm('/confirm-email', formFields(shown.text, '/confirm-email'));
      const again = await b.get(path);
      const replay = await b.postForm('/confirm-email', formFields(shown.text, '/confirm-email'));

      expect(shown.status).toBe(200);
      expect(unconfirmed!.user.email_confirmed).toBe(false);
      expect(confirmed.status).toBe(200);
      expect(textOf(confirmed.text)).toContain('Thank you: your e-mail address is confirmed.');
      expect((await repos.users.findUserByEmail(email))!.user.email_confirmed).toBe(true);
      expect(again.status).toBe(400);
      expect(replay.status).toBe(400);
      expect(textOf(replay.text)).toContain('This confirmation link is invalid, expired or already used.');
    });
  });

  describe('CSRF', () => {
    interface CsrfCase {
      /** The signed-in (or, for login, signed-out) browser that holds the CSRF cookie. */
      b: Browser;
      path: string;
      /** The form's other fields, valid: only the CSRF field is wrong. */
      fields: Record<string, string>;
      /** Asserts that nothing changed. */
      unchanged(reply: Reply): Promise<void>;
    }
    const FORMS = [
      'login', 'logout', 'signup', 'confirm-email', 'resend', 'password-reset', 'password-reset/confirm', 'oauth/authorize consent',
      'account revoke', 'developer register', 'developer update', 'developer secret', 'developer delete',
    ] as const;
    const cases = new Map<(typeof FORMS)[number], CsrfCase>();

    beforeAll(async () => {
      // An unconfirmed user with a pending confirmation link and a pending reset link, signed in,
      // who registered an application, authorized it (a live refresh token), and has a second
      // application's consent page open.
      const email = `csrf-${randomUUID()}@example.com`;
      const b = browser();
      await submit(b, '/signup', '/signup', signupFields(email));
      const account: Account = { user: (await repos.users.findUserByEmail(email))!.user, password: PASSPHRASE };
      const confirmToken = linkToken((await mailTo(email))[0]!.text, '/confirm-email');
      expect((await signIn(b, account)).status).toBe(303);
      await submit(browser(), '/password-reset', '/password-reset', { email });
      const resetToken = linkToken((await mailTo(email)).find((m) => m.subject === 'Reset your password')!.text, '/password-reset/confirm');
      const passwordHash = await repos.users.getPasswordHash(account.user.id);
      const app = await registerApp(b);
      const stored = (await repos.clients.getClient(app.clientId))!;
      let tokens = await tokensFor(b, account, app);
      const unconsented = await registerApp(b);
      const consentParams = authorizationParams({ client_id: unconsented.clientId, redirect_uri: unconsented.redirectUri, scope: 'read_user' });
      const consentPage = await b.get(authorizePath(consentParams));
      expect(consentPage.status).toBe(200);
      const mailCount = async () => (await mailTo(email)).length;
      const mailsBefore = await mailCount();
      const appPath = `/developer/apps/${app.clientId}`;
      const appUnchanged = async () => expect(await repos.clients.getClient(app.clientId)).toEqual(stored);
      const loginBrowser = browser();
      await loginBrowser.get('/login');

      cases.set('login', {
        b: loginBrowser, path: '/login', fields: { email, password: PASSPHRASE, return_to: '/account' },
        unchanged: async (reply) => {
          expect(reply.setCookies.some((c) => c.startsWith('session='))).toBe(false);
          expect((await loginBrowser.get('/account')).status).toBe(302);
        },
      });
      cases.set('logout', {
        b, path: '/logout', fields: {},
        unchanged: async () => expect((await b.get('/account')).status).toBe(200),
      });
      cases.set('signup', {
        b, path: '/signup', fields: signupFields(`csrf-new-${randomUUID()}@example.com`),
        unchanged: async () => {
          expect(await repos.users.findUserByEmail(cases.get('signup')!.fields.email!)).toBeUndefined();
          expect(await mailTo(cases.get('signup')!.fields.email!)).toEqual([]);
        },
      });
      cases.set('confirm-email', {
        b, path: '/confirm-email', fields: { token: confirmToken },
        unchanged: async () => {
          expect(await repos.links.peekLink('confirm-email', confirmToken)).toBe(account.user.id);
          expect((await repos.users.getUserById(account.user.id))!.email_confirmed).toBe(false);
        },
      });
      cases.set('resend', {
        b, path: '/confirm-email/resend', fields: {},
        unchanged: async () => expect(await mailCount()).toBe(mailsBefore),
      });
      cases.set('password-reset', {
        b, path: '/password-reset', fields: { email },
        unchanged: async () => expect(await mailCount()).toBe(mailsBefore),
      });
      cases.set('password-reset/confirm', {
        b, path: '/password-reset/confirm', fields: { token: resetToken, password: 'an entirely new passphrase' },
        unchanged: async () => {
          expect(await repos.links.peekLink('reset-password', resetToken)).toBe(account.user.id);
          expect(await repos.users.getPasswordHash(account.user.id)).toBe(passwordHash);
        },
      });
      cases.set('oauth/authorize consent', {
        b, path: '/oauth/authorize', fields: { ...formFields(consentPage.text, '/oauth/authorize'), decision: 'allow' },
        unchanged: async (reply) => {
          expect(reply.location).toBeNull();
          expect(await repos.grants.getConsent(account.user.id, unconsented.clientId)).toBeUndefined();
        },
      });
      cases.set('account revoke', {
        b, path: `/account/apps/${app.clientId}/revoke`, fields: {},
        unchanged: async () => {
          expect(await repos.grants.getConsent(account.user.id, app.clientId)).toBeDefined();
          const refreshed = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
          expect(refreshed.status).toBe(200);
          tokens = refreshed.body as typeof tokens;
        },
      });
      cases.set('developer register', {
        b, path: '/developer/apps', fields: { name: 'Forged', description: '', website: 'https://forged.example', redirect_uris: 'https://forged.example/cb' },
        unchanged: async () => expect((await repos.clients.listClientsByDeveloper(account.user.id)).map((c) => c.clientId))
          .toEqual([app.clientId, unconsented.clientId]),
      });
      cases.set('developer update', {
        b, path: appPath, fields: { name: 'Renamed', description: '', website: 'https://renamed.example', redirect_uris: 'https://renamed.example/cb' },
        unchanged: appUnchanged,
      });
      cases.set('developer secret', { b, path: `${appPath}/secret`, fields: {}, unchanged: appUnchanged });
      cases.set('developer delete', { b, path: `${appPath}/delete`, fields: {}, unchanged: appUnchanged });
    });

    it.each(FORMS.flatMap((form) => [[form, 'no csrf field'], [form, 'a wrong csrf field'], [form, 'no csrf cookie']] as const))(
      '%s: refuses %s with 403 and changes nothing',
      async (form, variant) => {
        const { b, path, fields: given, unchanged } = cases.get(form)!;
        const { csrf: _pageCsrf, ...fields } = given;
        const csrf = b.jar.get('csrf')!;
        expect(csrf).toBeDefined();
        const cookies = b.jar.header()!.split('; ').filter((c) => !c.startsWith('csrf=')).join('; ');

        const reply = variant === 'no csrf field'
          ? await b.postForm(path, fields)
          : variant === 'a wrong csrf field'
            ? await b.postForm(path, { ...fields, csrf: randomToken() })
            : await b.postForm(path, { ...fields, csrf }, { cookie: cookies || 'other=1' });

        expect(reply.status).toBe(403);
        expect(textOf(reply.text)).toContain('This form has expired or was not sent from our page.');
        await unchanged(reply);
      },
    );
  });

  describe('developer console', () => {
    it('refuses a plain-http redirect URI off loopback, naming it, and a fragment; accepts https and loopback http', async () => {
      const { b, account } = await signedIn();
      const fields = { name: 'Validator', description: '', website: 'https://validator.example' };

      const plainHttp = await submit(b, '/developer', '/developer/apps', {
        ...fields, redirect_uris: 'https://validator.example/ok\nhttp://validator.example/callback',
      });
      const fragment = await submit(b, '/developer', '/developer/apps', { ...fields, redirect_uris: 'https://validator.example/callback#top' });
      const none = (await repos.clients.listClientsByDeveloper(account.user.id)).length;
      const valid = await submit(b, '/developer', '/developer/apps', {
        ...fields, redirect_uris: 'https://validator.example/callback\r\nhttp://localhost:8123/callback',
      });

      expect(plainHttp.status).toBe(400);
      expect(textOf(plainHttp.text)).toContain('http://validator.example/callback: must use https (http is allowed only for localhost, 127.0.0.1 and [::1])');
      expect(plainHttp.text).toMatch(/<textarea id="redirect_uris"[^>]*aria-invalid="true"[^>]*>https:\/\/validator.example\/ok\nhttp:\/\/validator.example\/callback<\/textarea>/);
      expect(fragment.status).toBe(400);
      expect(textOf(fragment.text)).toContain('https://validator.example/callback#top: must not contain a fragment (#)');
      expect(none).toBe(0);
      expect(valid.status).toBe(200);
      const { clientId, clientSecret } = secretOf(valid);
      const stored = await repos.clients.getClient(clientId);
      expect(stored).toMatchObject({
        name: 'Validator', developerId: account.user.id, redirectUris: ['https://validator.example/callback', 'http://localhost:8123/callback'],
      });
      expect(stored!.secretHash).toBe(hashSecret(clientSecret));
      expect(JSON.stringify(stored)).not.toContain(clientSecret);
    });

    it("answers 404 for another developer's application, as for a missing one, and changes nothing", async () => {
      const owner = await signedIn();
      const app = await registerApp(owner.b);
      const before = await repos.clients.getClient(app.clientId);
      const other = await signedIn();
      const consolePage = await other.b.get('/developer');
      const { csrf } = formFields(consolePage.text, '/developer/apps');
      const fields = { csrf: csrf!, name: 'Hijacked', description: '', website: 'https://evil.example', redirect_uris: 'https://evil.example/cb' };
      const base = `/developer/apps/${app.clientId}`;
      const missing = `/developer/apps/${randomUUID()}`;

      const replies = {
        view: await other.b.get(base),
        update: await other.b.postForm(base, fields),
        secret: await other.b.postForm(`${base}/secret`, { csrf: fields.csrf }),
        delete: await other.b.postForm(`${base}/delete`, { csrf: fields.csrf }),
      };
      const viewMissing = await other.b.get(missing);

      for (const reply of Object.values(replies)) {
        expect(reply.status).toBe(404);
        expect(textOf(reply.text)).toBe(textOf(viewMissing.text));
        expect(reply.text).not.toContain(app.name);
      }
      expect(consolePage.text).not.toContain(app.clientId);
      expect(await repos.clients.getClient(app.clientId)).toEqual(before);
      expect((await owner.b.get(base)).status).toBe(200);
    });

    it('rotates the secret: the old one fails with invalid_client, the new one works', async () => {
      const { b, account } = await signedIn();
      const app = await registerApp(b);
      const tokens = await tokensFor(b, account, app);
      const appPage = await b.get(`/developer/apps/${app.clientId}`);

      const rotated = await b.postForm(`/developer/apps/${app.clientId}/secret`, formFields(appPage.text, `/developer/apps/${app.clientId}/secret`));
      const { clientId, clientSecret } = secretOf(rotated);
      const withOld = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      const withNew = await tokenRequest({ clientId, clientSecret }, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });

      expect(rotated.status).toBe(200);
      expect(textOf(rotated.text)).toContain('The previous secret no longer works.');
      expect(clientId).toBe(app.clientId);
      expect(clientSecret).not.toBe(app.clientSecret);
      expect(withOld).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(withNew.status).toBe(200);
      expect(withNew.body.refresh_token).toBeDefined();
    });

    it('deletes an application: its refresh tokens stop working and its authorize URL shows an error page', async () => {
      const { b, account } = await signedIn();
      const app = await registerApp(b);
      const tokens = await tokensFor(b, account, app);
      const familyId = (await repos.grants.getRefreshToken(hashSecret(tokens.refresh_token)))!.familyId;
      const appPage = await b.get(`/developer/apps/${app.clientId}`);
      const accountBefore = await b.get('/account');

      const deleted = await b.postForm(`/developer/apps/${app.clientId}/delete`, formFields(appPage.text, `/developer/apps/${app.clientId}/delete`));
      const refresh = await tokenRequest(app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      const authorizePage = await b.get(authorizePath(authorizationParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope: 'read_user' })));

      expect(deleted).toMatchObject({ status: 303, location: '/developer' });
      expect(await repos.clients.getClient(app.clientId)).toBeUndefined();
      expect((await repos.grants.getFamily(familyId))!.status).toBe('revoked');
      // The client itself is gone, so the token endpoint no longer authenticates it.
      expect(refresh).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(authorizePage.status).toBe(400);
      expect(authorizePage.location).toBeNull();
      expect(authorizePage.headers.get('content-type')).toMatch(/^text\/html/);
      expect(textOf(authorizePage.text)).toContain('This application is not registered, so it cannot ask for access.');
      expect((await b.get('/developer')).text).not.toContain(app.clientId);
      // Its users no longer see it among the applications they authorized.
      expect(accountBefore.text).toContain(`/account/apps/${app.clientId}/revoke`);
      expect((await b.get('/account')).text).not.toContain(app.clientId);
    });
  });

  describe('password reset', () => {
    it('ends every session of the account, on every browser', async () => {
      // Prepare: two signed-in browsers of the same account
      const { b: first, account } = await signedIn();
      const second = browser();
      expect((await signIn(second, account)).status).toBe(303);

      // Act: a reset through the e-mailed link
      const request = await submit(browser(), '/password-reset', '/password-reset', { email: account.user.email });
      expect(request.status).toBe(200);
      const [mail] = (await mailTo(account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = linkToken(mail!.text, '/password-reset/confirm');
      const reset = await submit(browser(), `/password-reset/confirm?token=${token}`, '/password-reset/confirm', { password: 'a brand new passphrase for grace' });

      // Assess
      expect(reset.status).toBe(200);
      for (const b of [first, second]) expect((await b.get('/account')).status).toBe(302);
    });
  });

  describe('logout', () => {
    it('ends the session on the server, not only in the browser', async () => {
      const { b } = await signedIn();
      const session = b.jar.get('session')!;
      const account = await b.get('/account');

      const out = await b.postForm('/logout', formFields(account.text, '/logout'));
      const replayed = browser();
      replayed.jar.set('session', session);
      const afterwards = await replayed.get('/account');

      expect(out).toMatchObject({ status: 303, location: '/login' });
      expect(out.setCookies.find((c) => c.startsWith('session='))).toMatch(/^session=;.*Max-Age=0/);
      expect(b.jar.get('session')).toBeUndefined();
      expect((await b.get('/account')).status).toBe(302);
      expect(afterwards).toMatchObject({ status: 302, location: '/login?return_to=%2Faccount' });
    });
  });
});
