import { GetCommand } from '#shared/data/commands';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { recoveryCodesKey, throttleKey, totpKey, userKey } from '#shared/data/item-keys';
import {
  authorizationParams, authorizePath, Browser, createAccount, decodeHtml, formFields, signIn, textOf, type Account, type Reply,
} from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { loosenAuthStorageLimit, useTable, useTestService } from '../support/service';
import { totpCodeAt as codeAt } from '../support/two-step';

/** The code an authenticator app shows for `secret` at `at` (epoch ms). */
const STEP_MS = 30_000;

/**
 * Two-step sign-in over HTTP: enrolment of an authenticator app from the
 * page's own key, the second step after the password, recovery codes, replay, throttling, a reset,
 * and the OAuth flow through it. The service runs in this process: tests set its clock
 * (vi.setSystemTime) to step from one 30-second code to the next without waiting.
 */
describe('two-step sign-in', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  // Twenty concurrent reservations can keep DynamoDB Local, shared with the other test files, past 1 s.
  beforeAll(() => loosenAuthStorageLimit());
  afterEach(() => {
    vi.useRealTimers();
  });

  const stored = async (key: { pk: string; sk: string }) =>
    (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;

  /** A new account signed in on a browser of its own, and the time (frozen) from which the test steps. */
  async function signedIn(): Promise<{ b: Browser; account: Account & { user: { id: string } }; t: number }> {
    const t = Date.now();
    vi.setSystemTime(t);
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    return { b, account, t };
  }

  /** Enrols an authenticator app at time `at` from the setup page's key; the key and the recovery codes shown once. */
  async function enrol(b: Browser, at: number): Promise<{ secret: string; recoveryCodes: string[] }> {
    vi.setSystemTime(at);
    const setup = await b.get('/account/security/totp');
    expect(setup.status).toBe(200);
    expect(setup.text).toContain('src="data:image/svg+xml;base64,');
    const secret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!.replace(/\s/g, '');
    // On the phone itself the key opens in the app through its otpauth:// link, the one the QR code holds.
    const link = new URL(/href="([^"]+)" id="totp-link"/.exec(setup.text)![1]!.replace(/&amp;/g, '&'));
    expect(link.protocol).toBe('otpauth:');
    expect(link.searchParams.get('secret')).toBe(secret);
    const confirmed = await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: codeAt(secret, at) });
    expect(confirmed).toMatchObject({ status: 303, location: '/account/security/recovery-codes' });
    const shown = await b.get(confirmed.location!);
    expect(shown.status).toBe(200);
    const recoveryCodes = [...shown.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    return { secret, recoveryCodes };
  }

  /** Signs in with the password on a new browser (or `b`): the answer and, for the second step, that browser. */
  async function passwordStep(account: Account, returnTo = '/account', b = new Browser(service.authUrl)): Promise<{ b: Browser; reply: Reply }> {
    return { b, reply: await signIn(b, account, returnTo) };
  }

  /** Posts `code` on the second-factor page the password step led to. */
  async function codeStep(b: Browser, location: string, code: string): Promise<Reply> {
    const form = await b.get(location);
    expect(form.status).toBe(200);
    return b.postForm('/login/second-factor', { ...formFields(form.text, '/login/second-factor'), code });
  }

  /** The first error message the page shows (hidden, empty ones left out). */
  const errorOf = (reply: Reply) => [...reply.text.matchAll(/<p class="error"[^>]*>([\s\S]*?)<\/p>/g)].map((m) => textOf(m[1]!)).find(Boolean) ?? '';

  describe('enrolment', () => {
    it('turns two-step sign-in on with the first code of the QR code’s key, and shows 10 recovery codes once', async () => {
      // Prepare
      const { b, account, t } = await signedIn();
      expect((await b.get('/account')).text).toContain('href="/account/security"');

      // Act
      const { secret, recoveryCodes } = await enrol(b, t);

      // Assess
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
      // Shown once: a reload says they were shown, and the table holds only their hashes.
      expect(textOf((await b.get('/account/security/recovery-codes')).text)).toContain('were shown once already');
      const hashes = (await stored(recoveryCodesKey(account.user.id)))!.codes as Set<string>;
      expect(hashes.size).toBe(10);
      for (const code of recoveryCodes) expect([...hashes].some((hash) => hash.includes(code) || hash.includes(code.replace(/-/g, '')))).toBe(false);
      expect((await stored(userKey(account.user.id)))?.totpEnabled).toBe(true);
      expect(textOf((await b.get('/account/security')).text)).toContain('10 recovery codes left');
    });

    it('refuses a wrong first code with the reason, shows the same key again and turns nothing on', async () => {
      // Prepare
      const { b, account, t } = await signedIn();
      const setup = await b.get('/account/security/totp');
      const secret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!;

      // Act
      const wrong = await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: String((Number(codeAt(secret.replace(/\s/g, ''), t)) + 1) % 1_000_000).padStart(6, '0') });
      const letters = await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: 'not a code' });

      // Assess
      expect(wrong.status).toBe(400);
      expect(errorOf(wrong)).toBe('That code is not right. Enter the 6-digit code the app shows now for this account.');
      expect(wrong.text).toContain(`id="totp-secret">${secret}<`);
      expect(letters.status).toBe(400);
      expect(await stored(totpKey(account.user.id))).toBeUndefined();
      expect((await stored(userKey(account.user.id)))?.totpEnabled).toBeUndefined();
    });
  });

  describe('sign-in', () => {
    it('asks for the code after the right password, and only then starts a session (with a new CSRF token)', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      vi.setSystemTime(t + STEP_MS);

      // Act
      const { b, reply } = await passwordStep(account);
      const csrfBefore = b.jar.get('csrf');
      const signedInReply = await codeStep(b, reply.location!, codeAt(secret, t + STEP_MS));

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
      expect(reply.setCookies.some((c) => c.startsWith('session='))).toBe(false);
      expect(reply.setCookies.find((c) => c.startsWith('pending_sign_in='))).toMatch(/Path=\/login; HttpOnly; SameSite=Lax; Max-Age=300$/);
      expect(signedInReply).toMatchObject({ status: 303, location: '/account' });
      expect(b.jar.get('session')).toBeDefined();
      expect(b.jar.get('pending_sign_in')).toBeUndefined();
      expect(b.jar.get('csrf')).toBeDefined();
      expect(b.jar.get('csrf')).not.toBe(csrfBefore);
      expect((await b.get('/account')).status).toBe(200);
    });

    it('refuses a code already used, in its window, from anyone: the second sign-in with it gets no session', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      vi.setSystemTime(t + STEP_MS);
      const code = codeAt(secret, t + STEP_MS);
      const one = await passwordStep(account);
      const other = await passwordStep(account);

      // Act
      const used = await codeStep(one.b, one.reply.location!, code);
      const replayed = await codeStep(other.b, other.reply.location!, code);
      // The enrolment's own code, of an earlier step, is refused too.
      const older = await codeStep(other.b, other.reply.location!, codeAt(secret, t));

      // Assess
      expect(used.status).toBe(303);
      expect(replayed.status).toBe(401);
      expect(errorOf(replayed)).toBe('That code was used already. Wait for your authenticator app to show the next code, then enter it.');
      expect(other.b.jar.get('session')).toBeUndefined();
      expect(older.status).toBe(401);
      // The next code works.
      vi.setSystemTime(t + 2 * STEP_MS);
      expect((await codeStep(other.b, other.reply.location!, codeAt(secret, t + 2 * STEP_MS))).status).toBe(303);
    });

    it('lets of two simultaneous sign-ins with one code exactly one in', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      vi.setSystemTime(t + STEP_MS);
      const code = codeAt(secret, t + STEP_MS);
      const attempts = await Promise.all([passwordStep(account), passwordStep(account), passwordStep(account)]);
      const forms = await Promise.all(attempts.map(async ({ b, reply }) => ({ b, fields: formFields((await b.get(reply.location!)).text, '/login/second-factor') })));

      // Act
      const replies = await Promise.all(forms.map(({ b, fields }) => b.postForm('/login/second-factor', { ...fields, code })));

      // Assess
      expect(replies.map((r) => r.status).sort()).toEqual([303, 401, 401]);
    });

    it('takes each recovery code once, in place of the app’s code', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { recoveryCodes } = await enrol(first, t);
      const [code] = recoveryCodes;

      // Act: typed in capitals and without dashes, as someone reading it from paper may
      const one = await passwordStep(account);
      const withCode = await codeStep(one.b, one.reply.location!, code!.replace(/-/g, ' ').toUpperCase());
      const other = await passwordStep(account);
      const again = await codeStep(other.b, other.reply.location!, code!);

      // Assess
      expect(withCode).toMatchObject({ status: 303, location: '/account' });
      expect(again.status).toBe(401);
      expect(errorOf(again)).toBe('That code is not right. Check the code your authenticator app shows now, or a recovery code, and try again.');
      expect(((await stored(recoveryCodesKey(account.user.id)))!.codes as Set<string>).size).toBe(9);
      expect(textOf((await one.b.get('/account/security')).text)).toContain('9 recovery codes left');
    });

    it('refuses a malformed code and one of another account, saying what to type', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      await enrol(first, t);
      const { b: otherFirst, t: t2 } = await signedIn();
      const { recoveryCodes: othersCodes } = await enrol(otherFirst, t2);
      const attempt = await passwordStep(account);

      // Act
      const malformed = await codeStep(attempt.b, attempt.reply.location!, '12345');
      const othersCode = await codeStep(attempt.b, attempt.reply.location!, othersCodes[0]!);

      // Assess
      expect(malformed.status).toBe(401);
      expect(errorOf(malformed)).toBe('Enter the 6-digit code your authenticator app shows, or a recovery code like abcd-efgh-jkmn-pqrs.');
      expect(othersCode.status).toBe(401);
      expect(attempt.b.jar.get('session')).toBeUndefined();
    });

    it('checks at most 5 of 20 simultaneous wrong codes; the others get 429 with Retry-After, and then even the right code waits', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      vi.setSystemTime(t + STEP_MS);
      const right = codeAt(secret, t + STEP_MS);
      const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
      const { b, reply } = await passwordStep(account);
      const fields = formFields((await b.get(reply.location!)).text, '/login/second-factor');

      // Act
      const replies = await Promise.all(Array.from({ length: 20 }, () => b.postForm('/login/second-factor', { ...fields, code: wrong })));

      // Assess
      const checked = replies.filter((r) => r.status === 401).length;
      const reserved = Number((await stored(throttleKey('second-factor', account.user.id)))?.failures);
      expect(checked).toBeGreaterThanOrEqual(1);
      expect(reserved).toBeLessThanOrEqual(5);
      expect(checked).toBeLessThanOrEqual(reserved);
      const refused = replies.filter((r) => r.status !== 401);
      expect(refused.length).toBeGreaterThanOrEqual(15);
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      }
      if (reserved === 5) {
        const held = await b.postForm('/login/second-factor', { ...fields, code: right });
        expect(held.status).toBe(429);
        expect(b.jar.get('session')).toBeUndefined();
      }
    });

    it('ends a sign-in that waited more than 5 minutes for its code: sign in again', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      const { b, reply } = await passwordStep(account);
      const fields = formFields((await b.get(reply.location!)).text, '/login/second-factor');
      const later = t + 5 * 60_000 + 1000;
      vi.setSystemTime(later);

      // Act
      const expired = await b.postForm('/login/second-factor', { ...fields, code: codeAt(secret, later) });

      // Assess
      expect(expired.status).toBe(400);
      expect(textOf(expired.text)).toContain('This sign-in has expired or was completed already. Sign in again with your password.');
      expect(b.jar.get('session')).toBeUndefined();
    });

    it('sends a browser without a pending sign-in from the code page back to the login form', async () => {
      const b = new Browser(service.authUrl);
      expect(await b.get('/login/second-factor?return_to=%2Fdeveloper')).toMatchObject({ status: 302, location: '/login?return_to=%2Fdeveloper' });
    });

    it('renews the CSRF token at a password-only sign-in too', async () => {
      // Prepare
      const account = await createAccount(service);
      const b = new Browser(service.authUrl);
      await b.get('/login');
      const before = b.jar.get('csrf');

      // Act
      const reply = await signIn(b, account);

      // Assess
      expect(reply.status).toBe(303);
      expect(before).toBeDefined();
      expect(b.jar.get('csrf')).toBeDefined();
      expect(b.jar.get('csrf')).not.toBe(before);
    });
  });

  describe('through the OAuth flow', () => {
    it('keeps the authorization request across the password and the code, to the consent page', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      vi.setSystemTime(t + STEP_MS);
      const b = new Browser(service.authUrl);
      const params = authorizationParams({ scope: 'read_user read_device' });

      // Act
      const authorize = await b.get(authorizePath(params));
      const returnTo = new URL(authorize.location!, service.authUrl).searchParams.get('return_to')!;
      const password = await signIn(b, account, returnTo);
      const code = await codeStep(b, password.location!, codeAt(secret, t + STEP_MS));
      const consent = await b.get(code.location!);

      // Assess
      expect(authorize.status).toBe(302);
      expect(password.location).toBe(`/login/second-factor?return_to=${encodeURIComponent(returnTo)}`);
      expect(code).toMatchObject({ status: 303, location: returnTo });
      expect(consent.status).toBe(200);
      expect(decodeHtml(consent.text)).toContain('to access your account?');
      // The page's form may be sent on to the application's redirect URI (CSP form-action).
      expect((await b.get(password.location!)).status).toBe(302); // signed in now: straight on
    });
  });

  describe('a password reset', () => {
    it('does not sign in: with the new password the account still asks for its code', async () => {
      // Prepare
      const { b: first, account, t } = await signedIn();
      const { secret } = await enrol(first, t);
      const b = new Browser(service.authUrl);
      const request = await b.get('/password-reset');
      expect((await b.postForm('/password-reset', { ...formFields(request.text, '/password-reset'), email: account.user.email })).status).toBe(303);
      const [message] = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
      const token = linkToken(service, message!.text, '/password-reset/confirm');
      const newPassword = 'a brand new passphrase after the reset';

      // Act
      const form = await b.get(`/password-reset/confirm?token=${token}`);
      const changed = await b.postForm('/password-reset/confirm', { ...formFields(form.text, '/password-reset/confirm'), password: newPassword });
      const login = await signIn(b, { user: account.user, password: newPassword });

      // Assess
      expect(changed.status).toBe(303);
      expect(b.jar.get('session')).toBeUndefined();
      expect(login).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
      expect(b.jar.get('session')).toBeUndefined();
      expect((await b.get('/account')).status).toBe(302);
      // With the code, in.
      vi.setSystemTime(t + STEP_MS);
      expect((await codeStep(b, login.location!, codeAt(secret, t + STEP_MS))).status).toBe(303);
      expect((await b.get('/account')).status).toBe(200);
      // The reset ended the session of the browser that enrolled.
      expect((await first.get('/account')).status).toBe(302);
    });
  });

  describe('turning it off', () => {
    it('asks for a fresh code: a wrong one changes nothing, a right one turns it off and the password alone signs in again', async () => {
      // Prepare
      const { b, account, t } = await signedIn();
      const { secret } = await enrol(b, t);
      vi.setSystemTime(t + STEP_MS);
      const page = await b.get('/account/security');
      const fields = formFields(page.text, '/account/security/totp/remove');

      // Act
      const wrong = await b.postForm('/account/security/totp/remove', { ...fields, code: '000000' === codeAt(secret, t + STEP_MS) ? '111111' : '000000' });
      const removed = await b.postForm('/account/security/totp/remove', { ...fields, code: codeAt(secret, t + STEP_MS) });

      // Assess
      expect(wrong.status).toBe(401);
      expect(errorOf(wrong)).toContain('That code is not right.');
      // Said at the top too, where the page opens (the form is below the fold on a phone), linked to the field.
      expect(wrong.text).toMatch(/<h1>Sign-in and security<\/h1>\s*<p class="error" role="alert">Two-step sign-in is still on: <a href="#code">That code is not right\./);
      expect(removed).toMatchObject({ status: 303, location: '/account/security?done=totp-removed' });
      expect(textOf((await b.get(removed.location!)).text)).toContain('Two-step sign-in is off');
      expect(await stored(totpKey(account.user.id))).toBeUndefined();
      expect(await stored(recoveryCodesKey(account.user.id))).toBeUndefined();
      expect((await stored(userKey(account.user.id)))?.totpEnabled).toBe(false);
      expect((await passwordStep(account)).reply).toMatchObject({ status: 303, location: '/account' });
    });

    it('takes a recovery code in place of the app’s code', async () => {
      // Prepare
      const { b, account, t } = await signedIn();
      const { recoveryCodes } = await enrol(b, t);
      const fields = formFields((await b.get('/account/security')).text, '/account/security/totp/remove');

      // Act
      const removed = await b.postForm('/account/security/totp/remove', { ...fields, code: recoveryCodes[3]! });

      // Assess
      expect(removed.status).toBe(303);
      expect(await stored(totpKey(account.user.id))).toBeUndefined();
    });
  });
});
