import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashSecret, randomToken } from '#shared/secrets';
import { grantTokenNames } from '#shared/oauth/grant-tokens';
import { readOutbox } from '#shared/email/outbox-mailer';
import {
  authorizationParams, authorize, authorizePath, Browser, createAccount, formFields, nextLoopbackAddress, signIn, textOf,
  type Account, type Reply,
} from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';
import { putThrottleRecord } from '../support/throttle';

const PASSPHRASE = 'a quiet lighthouse keeps the harbour';

interface App {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUri: string;
}

describe('accounts and developer console over HTTP', () => {
  const service = useTestService();
  const { doc, repos } = useTable(service);

  /** A browser of the authorization server; failed logins go from an address of their own so they throttle no other test. */
  const browser = (sourceAddress?: string) => new Browser(service.authUrl, sourceAddress ? { sourceAddress } : {});

  /** GETs a page and posts its form to `action` with `fields` added. */
  async function submit(b: Browser, pagePath: string, action: string, fields: Record<string, string>): Promise<Reply> {
    const form = await b.get(pagePath);
    expect(form.status).toBe(200);
    return b.postForm(action, { ...formFields(form.text, action), ...fields });
  }

  /** Follows a form's 303 to the page that says what it did (POST-redirect-GET). */
  async function followed(b: Browser, reply: Reply, location: string): Promise<Reply> {
    expect(reply).toMatchObject({ status: 303, location, text: '' });
    const shown = await b.get(location);
    expect(shown.status).toBe(200);
    return shown;
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
    return { ...secretOf(await followToSecret(b, reply)), name: overrides.name ?? name, redirectUri: overrides.redirect_uris ?? redirectUri };
  }

  /** Follows a registration's or rotation's 303 to the page that shows the new secret. */
  async function followToSecret(b: Browser, reply: Reply): Promise<Reply> {
    expect(reply.status).toBe(303);
    expect(reply.location).toMatch(/^\/developer\/apps\/[^/]+\/secret$/);
    const shown = await b.get(reply.location!);
    expect(shown.status).toBe(200);
    return shown;
  }

  /** Rotates the application's secret as its page does (confirmed); returns the redirect. */
  async function rotate(b: Browser, app: Pick<App, 'clientId'>, fields: Record<string, string> = { confirm: 'yes' }): Promise<Reply> {
    const path = `/developer/apps/${app.clientId}/secret`;
    return b.postForm(path, { ...formFields((await b.get(`/developer/apps/${app.clientId}`)).text, path), ...fields });
  }

  function secretOf(reply: Reply): { clientId: string; clientSecret: string } {
    const clientId = /id="client-id">([^<]+)</.exec(reply.text)?.[1];
    const clientSecret = /id="client-secret">([^<]+)</.exec(reply.text)?.[1];
    if (!clientId || !clientSecret) throw new Error(`no credentials on: ${textOf(reply.text).slice(0, 300)}`);
    return { clientId, clientSecret };
  }

  async function tokenRequest(app: Pick<App, 'clientId' | 'clientSecret'>, params: Record<string, string>, options: { basic?: boolean; path?: string } = {}) {
    const credentials: { headers: Record<string, string>; fields: Record<string, string> } = options.basic
      ? { headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}` }, fields: {} }
      : { headers: {}, fields: { client_id: app.clientId, client_secret: app.clientSecret } };
    const response = await fetch(`${service.authUrl}${options.path ?? '/oauth/token'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...credentials.headers },
      body: new URLSearchParams({ ...params, ...credentials.fields }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, string> };
  }

  /** The user (signed in on `b`) authorizes the app; returns the tokens of the code exchange. */
  async function tokensFor(b: Browser, account: Account, app: App, scope = 'read_user') {
    const callback = await authorize(b, authorizationParams({ client_id: app.clientId, redirect_uri: app.redirectUri, scope }), { account });
    const exchange = await tokenRequest(app, { grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: app.redirectUri });
    expect(exchange.status).toBe(200);
    return exchange.body as { access_token: string; refresh_token: string };
  }

  describe('login throttle', () => {
    // The service runs in this process, on this process's clock: each test stops time
    // (vi.setSystemTime) and moves it on itself, so every wait is exact and nothing sleeps.
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Stops time now; `pass(ms)` moves it on. */
    function stopTime() {
      let now = Date.now();
      vi.setSystemTime(now);
      return { pass: (ms: number) => vi.setSystemTime((now += ms)) };
    }

    /** Wrong-password attempts with time moved on in between; what each answer was, with the address blanked out. */
    async function failureSequence(email: string) {
      const b = browser(nextLoopbackAddress());
      const answers: { status: number; retryAfter: string | null; text: string }[] = [];
      const form = formFields((await b.get('/login')).text, '/login');
      const attempt = async () => {
        const reply = await b.postForm('/login', { ...form, email, password: 'not the right password' });
        answers.push({ status: reply.status, retryAfter: reply.headers.get('retry-after'), text: textOf(reply.text).replaceAll(email, '<email>') });
      };
      const { pass } = stopTime();
      for (let i = 0; i < 3; i++) await attempt();
      await attempt();
      pass(999);
      await attempt();
      pass(1);
      await attempt();
      await attempt();
      pass(1001);
      await attempt();
      pass(999);
      await attempt();
      await attempt();
      return answers;
    }

    it('answers 429 with a Retry-After after 3 failures, doubling from 1 s once each wait has passed, alike for an unknown account', async () => {
      const known = await createAccount(service);
      const unknown = `nobody-${randomUUID()}@example.com`;

      const forKnown = await failureSequence(known.user.email);
      const forUnknown = await failureSequence(unknown);

      expect(forKnown.map((a) => [a.status, a.retryAfter])).toEqual([
        [401, null], [401, null], [401, null],
        [429, '1'], // at the third failure
        [429, '1'], // 999 ms later: 1 ms to go
        [401, null], // 1 s later: the fourth failure
        [429, '2'],
        [429, '1'], // 1,001 ms later
        [401, null], // 2 s later: the fifth failure
        [429, '4'],
      ]);
      expect(forKnown[0]!.text).toContain('Incorrect e-mail address or password.');
      expect(forKnown[3]!.text).toContain('Too many failed attempts. Try again in 1 second.');
      expect(forKnown.at(-1)!.text).toContain('Too many failed attempts. Try again in 4 seconds.');
      // No enumeration: an unknown account gets exactly the same answers.
      expect(forUnknown).toEqual(forKnown);
    });

    it('holds the account at the guessing address, even with the right password, but not the owner elsewhere nor other accounts there', async () => {
      const victim = await createAccount(service);
      const other = await createAccount(service);
      const attacker = nextLoopbackAddress();
      stopTime();
      for (let i = 0; i < 3; i++) {
        expect((await signIn(browser(attacker), { ...victim, password: 'guess' })).status).toBe(401);
      }

      const rightPasswordThere = await signIn(browser(attacker), victim);
      const rightPasswordElsewhere = await signIn(browser(nextLoopbackAddress()), victim);
      const otherAccountSameAddress = await signIn(browser(attacker), other);

      expect(rightPasswordThere.status).toBe(429);
      expect(rightPasswordThere.headers.get('retry-after')).toBe('1');
      expect(rightPasswordThere.setCookies.some((c) => c.startsWith('session='))).toBe(false);
      // Three wrong passwords do not lock the owner out, nor a neighbour behind the same address.
      expect(rightPasswordElsewhere.status).toBe(303);
      expect(otherAccountSameAddress.status).toBe(303);
    });

    it('grows the delay with the failure count once the previous wait has passed, up to 15 minutes', async () => {
      const account = await createAccount(service);
      const address = nextLoopbackAddress();
      const b = browser(address);
      const form = formFields((await b.get('/login')).text, '/login');
      const attempt = (password: string) => b.postForm('/login', { ...form, email: account.user.email, password });
      const { pass } = stopTime();
      const pair = `${account.user.email} ${address}`;
      // Five failures from this address, the last a minute ago: their 4-second wait is over.
      await putThrottleRecord({ doc, table: service.tableName }, 'account-address', pair, { failures: 5, nextAttemptAt: Date.now() - 56_000 });

      const allowed = await attempt('guess');
      const held = await attempt('guess');
      const records = await repos.throttle.getRecords(account.user.email, address);
      await putThrottleRecord({ doc, table: service.tableName }, 'account-address', pair, { failures: 26, nextAttemptAt: Date.now() + 15 * 60_000 });
      const capped = await attempt(account.password);
      pass(15 * 60_000 - 1);
      const lastMillisecond = await attempt(account.password);
      pass(1);
      const signedIn = await attempt(account.password);

      expect(allowed.status).toBe(401);
      expect(records.map((r) => r.failures)).toEqual([6, 1, 1]);
      // The sixth failure's wait: 8 s, doubled from the fifth's 4 s.
      expect(held.status).toBe(429);
      expect(held.headers.get('retry-after')).toBe('8');
      // 26 failures would wait 2^23 s; the cap is 15 minutes, and the right password waits too.
      expect(capped.status).toBe(429);
      expect(capped.headers.get('retry-after')).toBe('900');
      expect(lastMillisecond.status).toBe(429);
      expect(lastMillisecond.headers.get('retry-after')).toBe('1');
      expect(signedIn.status).toBe(303);
    });
  });

  describe('no account enumeration by e-mail', () => {
    it('answers a sign-up with a used address like a new one, and mails the owner a notice instead of a link', async () => {
      const owner = await createAccount(service);
      const fresh = `new-${randomUUID()}@example.com`;

      const [forTaken, forCreated] = [browser(), browser()];
      const takenReply = await submit(forTaken, '/signup', '/signup', signupFields(owner.user.email.toUpperCase()));
      const createdReply = await submit(forCreated, '/signup', '/signup', signupFields(fresh));
      const taken = await followed(forTaken, takenReply, '/signup?done=signed-up');
      const created = await followed(forCreated, createdReply, '/signup?done=signed-up');

      expect(takenReply.headers.get('content-length')).toBe(createdReply.headers.get('content-length'));
      expect(textOf(taken.text)).toBe(textOf(created.text));
      expect(textOf(taken.text)).toContain('Check your e-mail');
      const [notice, ...moreToOwner] = await mailTo(service, owner.user.email);
      expect(moreToOwner).toEqual([]);
      expect(notice!.subject).toBe('Someone tried to create an account with your address');
      expect(notice!.text).not.toContain('/confirm-email');
      expect(notice!.text).toContain(`${service.authUrl}/password-reset`);
      const [confirmation] = await mailTo(service, fresh);
      expect(confirmation!.subject).toBe('Confirm your e-mail address');
      expect(linkToken(service, confirmation!.text, '/confirm-email')).toMatch(/^[A-Za-z0-9_-]{43}$/);
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

      expect(forUnknown).toMatchObject({ status: 303, location: '/password-reset?done=reset-sent', text: '' });
      expect(forKnown).toMatchObject({ status: 303, location: '/password-reset?done=reset-sent', text: '' });
      expect(afterUnknown).toBe(before);
      expect(await mailTo(service, unknown)).toEqual([]);
      const [reset] = await mailTo(service, owner.user.email);
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
      expect(forHuge).toMatchObject({ status: 303, location: forUnknown.location });
    });
  });

  describe('e-mail confirmation link', () => {
    it('confirms nothing on GET (link scanners), confirms on POST, and works once', async () => {
      const email = `confirm-${randomUUID()}@example.com`;
      const b = browser();
      await submit(b, '/signup', '/signup', signupFields(email));
      const token = linkToken(service, (await mailTo(service, email))[0]!.text, '/confirm-email');
      const path = `/confirm-email?token=${token}`;

      const shown = await b.get(path);
      const unconfirmed = await repos.users.findUserByEmail(email);
      const confirmed = await b.postForm('/confirm-email', formFields(shown.text, '/confirm-email'));
      const again = await b.get(path);
      const replay = await b.postForm('/confirm-email', formFields(shown.text, '/confirm-email'));

      expect(shown.status).toBe(200);
      expect(unconfirmed!.user.email_confirmed).toBe(false);
      expect(textOf((await followed(b, confirmed, '/confirm-email?done=confirmed')).text)).toContain('Thank you: your e-mail address is confirmed.');
      expect((await repos.users.findUserByEmail(email))!.user.email_confirmed).toBe(true);
      expect(again.status).toBe(400);
      expect(replay.status).toBe(400);
      expect(textOf(replay.text)).toContain('This confirmation link is invalid, expired or already used.');
    });
  });

  describe('account forms: POST-redirect-GET', () => {
    it('answers each successful form with 303 to a page that says what it did; reloading that page does it not again', async () => {
      const email = `prg-${randomUUID()}@example.com`;
      const b = browser();
      const mails = async () => (await mailTo(service, email)).length;

      const signup = await submit(b, '/signup', '/signup', signupFields(email));
      const signupShown = await followed(b, signup, '/signup?done=signed-up');
      const afterSignup = await mails();
      await b.get(signup.location!);
      const account: Account = { user: (await repos.users.findUserByEmail(email))!.user, password: PASSPHRASE };
      expect((await signIn(b, account)).status).toBe(303);
      const resend = await submit(b, '/account', '/confirm-email/resend', {});
      const resendShown = await followed(b, resend, '/confirm-email?done=resent');
      const afterResend = await mails();
      await b.get(resend.location!);
      const token = linkToken(service, (await mailTo(service, email)).at(-1)!.text, '/confirm-email');
      const confirm = await submit(b, `/confirm-email?token=${token}`, '/confirm-email', {});
      const confirmShown = await followed(b, confirm, '/confirm-email?done=confirmed');
      const reset = await submit(b, '/password-reset', '/password-reset', { email });
      const resetShown = await followed(b, reset, '/password-reset?done=reset-sent');
      const afterReset = await mails();
      await b.get(reset.location!);
      const resetToken = linkToken(service, (await mailTo(service, email)).at(-1)!.text, '/password-reset/confirm');
      const newPassword = await submit(b, `/password-reset/confirm?token=${resetToken}`, '/password-reset/confirm', { password: 'a fresh passphrase after the redirect' });
      const newPasswordShown = await followed(b, newPassword, '/password-reset/confirm?done=password-changed');

      expect(textOf(signupShown.text)).toContain('We sent a message to the address you gave.');
      expect(textOf(resendShown.text)).toContain(`We sent a new confirmation link to ${email}.`);
      expect(textOf(confirmShown.text)).toContain('Thank you: your e-mail address is confirmed.');
      expect(textOf(resetShown.text)).toContain('If this address has an account, we sent it a link to choose a new password.');
      expect(textOf(newPasswordShown.text)).toContain('Your new password is set. Sign in with it.');
      // Reloads sent no mail: one per form.
      expect([afterSignup, afterResend, afterReset]).toEqual([1, 2, 3]);
      expect(await mails()).toBe(3);
      expect((await repos.users.findUserByEmail(email))!.user.email_confirmed).toBe(true);
      expect((await signIn(browser(), { ...account, password: 'a fresh passphrase after the redirect' })).status).toBe(303);
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
      'account revoke', 'developer register', 'developer update', 'developer secret', 'developer retire', 'developer delete',
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
      const confirmToken = linkToken(service, (await mailTo(service, email))[0]!.text, '/confirm-email');
      expect((await signIn(b, account)).status).toBe(303);
      await submit(browser(), '/password-reset', '/password-reset', { email });
      const resetToken = linkToken(service, (await mailTo(service, email)).find((m) => m.subject === 'Reset your password')!.text, '/password-reset/confirm');
      const passwordHash = await repos.users.getPasswordHash(account.user.id);
      const app = await registerApp(b);
      // Rotated once: a previous secret that a retirement would remove (the refreshes below use it).
      await followToSecret(b, await rotate(b, app));
      const stored = (await repos.clients.getClient(app.clientId))!;
      expect(stored.previousSecretHash).toBe(hashSecret(app.clientSecret));
      let tokens = await tokensFor(b, account, app);
      const unconsented = await registerApp(b);
      const consentParams = authorizationParams({ client_id: unconsented.clientId, redirect_uri: unconsented.redirectUri, scope: 'read_user' });
      const consentPage = await b.get(authorizePath(consentParams));
      expect(consentPage.status).toBe(200);
      const mailCount = async () => (await mailTo(service, email)).length;
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
          expect(await mailTo(service, cases.get('signup')!.fields.email!)).toEqual([]);
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
      cases.set('developer secret', { b, path: `${appPath}/secret`, fields: { confirm: 'yes' }, unchanged: appUnchanged });
      cases.set('developer retire', { b, path: `${appPath}/secret/retire`, fields: {}, unchanged: appUnchanged });
      cases.set('developer delete', { b, path: `${appPath}/delete`, fields: { confirm_name: app.name }, unchanged: appUnchanged });
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
      const { clientId, clientSecret } = secretOf(await followToSecret(b, valid));
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
        secret: await other.b.postForm(`${base}/secret`, { csrf: fields.csrf, confirm: 'yes' }),
        secretPage: await other.b.get(`${base}/secret`),
        retire: await other.b.postForm(`${base}/secret/retire`, { csrf: fields.csrf }),
        deletePage: await other.b.get(`${base}/delete`),
        delete: await other.b.postForm(`${base}/delete`, { csrf: fields.csrf, confirm_name: app.name }),
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

    it('registers once: the POST answers 303, and reloading the page it leads to registers nothing', async () => {
      const { b, account } = await signedIn();
      const form = formFields((await b.get('/developer')).text, '/developer/apps');
      const fields = { ...form, name: 'Reloaded', description: '', website: 'https://reloaded.example', redirect_uris: 'https://reloaded.example/cb' };

      const posted = await b.postForm('/developer/apps', fields);
      const shown = await b.get(posted.location!);
      const reloaded = await b.get(posted.location!);

      expect(posted).toMatchObject({ status: 303, location: expect.stringMatching(/^\/developer\/apps\/[0-9a-f-]{36}\/secret$/) as string });
      expect(posted.text).toBe('');
      expect(reloaded.status).toBe(200);
      expect(textOf(shown.text)).toContain('Application registered');
      const apps = await repos.clients.listClientsByDeveloper(account.user.id);
      expect(apps.map((a) => a.name)).toEqual(['Reloaded']);
    });

    it('shows a new secret once, never in a URL: a second GET of its page does not show it', async () => {
      const { b } = await signedIn();
      const posted = await submit(b, '/developer', '/developer/apps', {
        name: 'Shown once', description: '', website: 'https://once.example', redirect_uris: 'https://once.example/cb',
      });
      const revealCookie = posted.setCookies.find((c) => c.startsWith('reveal='));

      const first = await b.get(posted.location!);
      const second = await b.get(posted.location!);

      const { clientId, clientSecret } = secretOf(first);
      expect(posted.location).toBe(`/developer/apps/${clientId}/secret`);
      expect(posted.location).not.toContain(clientSecret);
      // The cookie holds a key to the secret, not the secret; it is HttpOnly, for that page only, and cleared once shown.
      expect(revealCookie).toMatch(new RegExp(`^reveal=[A-Za-z0-9_-]{43}; Path=/developer/apps/${clientId}/secret; HttpOnly; SameSite=Lax; Max-Age=600$`));
      expect(revealCookie).not.toContain(clientSecret);
      expect(first.setCookies).toContainEqual(expect.stringMatching(/^reveal=; Path=\/developer\/apps\/[^;]+\/secret; .*Max-Age=0$/));
      expect(first.headers.get('cache-control')).toBe('no-store');
      expect(second.status).toBe(200);
      expect(second.text).not.toContain(clientSecret);
      expect(second.text).not.toContain('id="client-secret"');
      expect(textOf(second.text)).toContain('A client secret is shown only once');
      // The key alone, presented again, opens nothing: the stored secret is gone.
      b.jar.set('reveal', revealCookie!.split(';')[0]!.slice('reveal='.length));
      expect((await b.get(posted.location!)).text).not.toContain(clientSecret);
      expect((await b.get(`/developer/apps/${clientId}`)).text).not.toContain(clientSecret);
    });

    it('answers every successful console POST with 303 to a GET page', async () => {
      const { b } = await signedIn();
      const app = await registerApp(b);
      const base = `/developer/apps/${app.clientId}`;
      const appPage = (await b.get(base)).text;

      const update = await b.postForm(base, { ...formFields(appPage, base), name: app.name, description: 'Edited.', website: 'https://app.example', redirect_uris: app.redirectUri });
      const rotation = await rotate(b, app);
      const retirement = await b.postForm(`${base}/secret/retire`, formFields((await b.get(base)).text, `${base}/secret/retire`));
      const deletion = await b.postForm(`${base}/delete`, { ...formFields((await b.get(`${base}/delete`)).text, `${base}/delete`), confirm_name: app.name });

      expect(update).toMatchObject({ status: 303, location: base });
      expect(rotation).toMatchObject({ status: 303, location: `${base}/secret` });
      expect(retirement).toMatchObject({ status: 303, location: base });
      expect(deletion).toMatchObject({ status: 303, location: '/developer' });
      for (const reply of [update, rotation, retirement, deletion]) expect(reply.text).toBe('');
    });

    it('rotates only once the developer confirms: without the box ticked the page asks again, 400, and the secret stays', async () => {
      const { b } = await signedIn();
      const app = await registerApp(b);
      const before = await repos.clients.getClient(app.clientId);

      const unconfirmed = await rotate(b, app, {});
      const wrongValue = await rotate(b, app, { confirm: 'no' });

      for (const reply of [unconfirmed, wrongValue]) {
        expect(reply.status).toBe(400);
        expect(reply.location).toBeNull();
        expect(textOf(reply.text)).toContain('Tick the box to confirm that you want a new secret.');
        expect(textOf(reply.text)).toContain('The current one keeps working for 7 more days, or until you retire it');
      }
      expect(await repos.clients.getClient(app.clientId)).toEqual(before);
      expect((await tokenRequest(app, { token: randomToken() }, { path: '/oauth/revoke' })).status).toBe(200);
    });

    it('keeps the old secret working after a rotation (token and revocation, post and Basic) until it is retired', async () => {
      const { b, account } = await signedIn();
      const app = await registerApp(b);
      const old = { clientId: app.clientId, clientSecret: app.clientSecret };
      const tokens = await tokensFor(b, account, app);

      const rotated = await followToSecret(b, await rotate(b, app));
      const fresh = secretOf(rotated);
      const appPage = await b.get(`/developer/apps/${app.clientId}`);
      const refreshes = [];
      let refreshToken = tokens.refresh_token;
      for (const [credentials, basic] of [[old, false], [old, true], [fresh, false], [fresh, true]] as const) {
        const reply = await tokenRequest(credentials, { grant_type: 'refresh_token', refresh_token: refreshToken }, { basic });
        refreshes.push(reply.status);
        if (reply.status === 200) refreshToken = reply.body.refresh_token!;
      }
      const revocations = [];
      for (const [credentials, basic] of [[old, false], [old, true], [fresh, false], [fresh, true]] as const) {
        const own = await tokensFor(b, account, app);
        revocations.push((await tokenRequest(credentials, { token: own.refresh_token }, { basic, path: '/oauth/revoke' })).status);
        revocations.push((await tokenRequest(fresh, { grant_type: 'refresh_token', refresh_token: own.refresh_token })).body.error);
      }

      expect(fresh.clientId).toBe(app.clientId);
      expect(fresh.clientSecret).not.toBe(app.clientSecret);
      expect(textOf(rotated.text)).toContain('New client secret');
      expect(textOf(rotated.text)).toMatch(/The previous secret keeps working until \d{4}-\d\d-\d\d \d\d:\d\d UTC, or until you retire it/);
      expect(refreshes).toEqual([200, 200, 200, 200]);
      expect(revocations).toEqual([200, 'invalid_grant', 200, 'invalid_grant', 200, 'invalid_grant', 200, 'invalid_grant']);
      const stored = (await repos.clients.getClient(app.clientId))!;
      expect(stored).toMatchObject({ secretHash: hashSecret(fresh.clientSecret), previousSecretHash: hashSecret(old.clientSecret) });
      const until = new Date(Date.parse(`${stored.secretCreatedAt!}Z`) + 7 * 24 * 3600 * 1000).toISOString();
      expect(textOf(appPage.text)).toContain(`The previous secret still works until ${until.slice(0, 10)} ${until.slice(11, 16)} UTC.`);

      // Act: retire the previous secret
      const retirePath = `/developer/apps/${app.clientId}/secret/retire`;
      const retired = await b.postForm(retirePath, formFields(appPage.text, retirePath));

      expect(retired).toMatchObject({ status: 303, location: `/developer/apps/${app.clientId}` });
      for (const basic of [false, true]) {
        expect(await tokenRequest(old, { grant_type: 'refresh_token', refresh_token: refreshToken }, { basic })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
        expect(await tokenRequest(old, { token: refreshToken }, { basic, path: '/oauth/revoke' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      }
      const withNew = await tokenRequest(fresh, { grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: true });
      expect(withNew.status).toBe(200);
      expect((await repos.clients.getClient(app.clientId))!.previousSecretHash).toBeUndefined();
      const after = await b.get(`/developer/apps/${app.clientId}`);
      expect(after.text).not.toContain('secret/retire');
      expect(textOf(after.text)).not.toContain('The previous secret still works');
    });

    it('ends the old secret after the 7-day overlap, and a second rotation replaces the previous secret at once', async () => {
      const { b, account } = await signedIn();
      const app = await registerApp(b);
      const tokens = await tokensFor(b, account, app);
      const second = secretOf(await followToSecret(b, await rotate(b, app)));
      const refresh = (credentials: { clientId: string; clientSecret: string }, refreshToken: string) =>
        tokenRequest(credentials, { grant_type: 'refresh_token', refresh_token: refreshToken });

      // The rotation was 7 days ago, less a minute: the old secret still works.
      const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 23);
      await repos.clients.updateClient(account.user.id, app.clientId, { secretCreatedAt: at(7 * 24 * 3600 * 1000 - 60_000) });
      const withinOverlap = await refresh(app, tokens.refresh_token);
      // Now 7 days and a minute ago: it is past.
      await repos.clients.updateClient(account.user.id, app.clientId, { secretCreatedAt: at(7 * 24 * 3600 * 1000 + 60_000) });
      // The token endpoint read the application before the rotation, seconds ago in fact, and trusts
      // that item for 5 s for callers presenting its current secret, the first (client-cache.ts). A
      // call with the second secret, as the app's next deployment makes, has it read again.
      expect(await refresh(second, 'not-a-refresh-token')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      const pastOverlap = await refresh(app, withinOverlap.body.refresh_token!);
      const pastRevocation = await tokenRequest(app, { token: withinOverlap.body.refresh_token! }, { path: '/oauth/revoke' });
      const pageAfter = await b.get(`/developer/apps/${app.clientId}`);
      const withSecond = await refresh(second, withinOverlap.body.refresh_token!);
      // A second rotation: the second secret becomes the previous one, the first no longer counts at all.
      const third = secretOf(await followToSecret(b, await rotate(b, second)));
      const firstAfterSecondRotation = await refresh(app, withSecond.body.refresh_token!);
      const secondAfterSecondRotation = await refresh(second, withSecond.body.refresh_token!);
      const withThird = await refresh(third, secondAfterSecondRotation.body.refresh_token!);

      expect(withinOverlap.status).toBe(200);
      expect(pastOverlap).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(pastRevocation).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(pageAfter.text).not.toContain('secret/retire');
      expect(withSecond.status).toBe(200);
      expect(firstAfterSecondRotation).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(secondAfterSecondRotation.status).toBe(200);
      expect(withThird.status).toBe(200);
    });

    it('deletes only once the developer types the name: a wrong or missing name deletes nothing and asks again', async () => {
      const { b } = await signedIn();
      const app = await registerApp(b);
      const before = await repos.clients.getClient(app.clientId);
      const path = `/developer/apps/${app.clientId}/delete`;
      const appPage = await b.get(`/developer/apps/${app.clientId}`);
      const confirmPage = await b.get(path);
      const fields = formFields(confirmPage.text, path);

      const missing = await b.postForm(path, fields);
      const wrong = await b.postForm(path, { ...fields, confirm_name: `${app.name.toLowerCase()}x` });
      const afterWrong = await repos.clients.getClient(app.clientId);

      // The application's page only links to the confirmation: it has no form that deletes.
      expect(appPage.text).toContain(`href="${path}"`);
      expect(() => formFields(appPage.text, path)).toThrow();
      expect(confirmPage.status).toBe(200);
      expect(textOf(confirmPage.text)).toContain(`Type the application’s name, ${app.name}, to confirm`);
      expect(missing.status).toBe(400);
      expect(textOf(missing.text)).toContain('Type the application’s name to confirm.');
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.text)).toContain('That is not the application’s name.');
      expect(wrong.text).toMatch(/<input id="confirm_name"[^>]*aria-invalid="true"/);
      expect(afterWrong).toEqual(before);
    });

    it('deletes an application: its refresh tokens stop working and its authorize URL shows an error page', async () => {
      const { b, account } = await signedIn();
      const app = await registerApp(b);
      const tokens = await tokensFor(b, account, app);
      const familyId = grantTokenNames(tokens.refresh_token)!.familyId;
      const path = `/developer/apps/${app.clientId}/delete`;
      const confirmPage = await b.get(path);
      const accountBefore = await b.get('/account');

      const deleted = await b.postForm(path, { ...formFields(confirmPage.text, path), confirm_name: ` ${app.name} ` });
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
      expect(request).toMatchObject({ status: 303, location: '/password-reset?done=reset-sent' });
      const [mail] = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = linkToken(service, mail!.text, '/password-reset/confirm');
      const reset = await submit(browser(), `/password-reset/confirm?token=${token}`, '/password-reset/confirm', { password: 'a brand new passphrase for grace' });

      // Assess
      expect(reset).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
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
