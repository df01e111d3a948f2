import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Browser, createAccount, formFields, signIn, type Reply } from '../support/oauth-client';
import { mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';

const PASSPHRASE = 'a quiet lighthouse keeps the harbour';
/** The service's limit, written here so that the two can disagree. */
const LIMIT = 5;

/**
 * Account e-mail on the local service, read from its outbox: names cannot inject links or headers,
 * and each address gets at most five account e-mails an hour, whether or not it has an account.
 */
describe('account e-mail', () => {
  const service = useTestService();
  const { repos } = useTable(service);

  /** GETs `page` in a browser of its own and posts its form to `action` with `fields`; the reply and how long it took. */
  async function submit(page: string, action: string, fields: Record<string, string>, b = new Browser(service.authUrl)) {
    const form = await b.get(page);
    expect(form.status).toBe(200);
    const started = performance.now();
    const reply = await b.postForm(action, { ...formFields(form.text, action), ...fields });
    return { reply, ms: performance.now() - started };
  }

  const signUp = (email: string, firstname = 'Grace') =>
    submit('/signup', '/signup', { firstname, lastname: 'Hopper', email, password: PASSPHRASE, gender: '2' });
  const askReset = (email: string) => submit('/password-reset', '/password-reset', { email });
  /** What a client can observe of an answer. */
  const observed = (reply: Reply) => ({ status: reply.status, location: reply.location, text: reply.text });

  describe('names', () => {
    it('a first name with line breaks, a URL and a bidirectional override is stored normalized and cannot form a link or header in the mail', async () => {
      // Prepare
      const email = `injected-${randomUUID()}@example.com`;
      const firstname = 'Grace\r\nBcc: victim@example.com\r\n\r\nVisit https://evil.example/login \u202Enow\u202C';

      // Act
      const { reply } = await signUp(email, firstname);

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/signup?done=signed-up' });
      const stored = (await repos.users.findUserByEmail(email))!.user;
      expect(stored.firstname).toBe('Grace Bcc: victim@example.com Visit https://evil.example/login now');
      const [mail, ...more] = await mailTo(service, email);
      expect(more).toEqual([]);
      expect(mail!.subject).toBe('Confirm your e-mail address');
      const [first, second] = mail!.text.split('\n');
      // Broken up, and cut at 40 characters.
      expect(first).toBe('Hello Grace Bcc victim example. com Visit http,');
      expect(second).toBe('');
      expect(mail!.text).not.toContain('evil.example');
      expect(mail!.text).not.toContain('victim@');
      expect(mail!.text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\r]/);
    });

    it('a first name of invisible characters only is refused with the field\'s error, and nothing is sent', async () => {
      // Prepare
      const email = `invisible-${randomUUID()}@example.com`;

      // Act
      const { reply } = await signUp(email, '\u200B\u202E \u2066');

      // Assess
      expect(reply.status).toBe(400);
      expect(reply.text).toContain('Give your first name (up to 100 characters).');
      expect(await repos.users.findUserByEmail(email)).toBeUndefined();
      expect(await mailTo(service, email)).toEqual([]);
    });
  });

  describe(`at most ${LIMIT} account e-mails an hour per address`, () => {
    // The service runs in this process: its clock is put a minute into the current hour (a window
    // of the limit), so that no test straddles two windows. Timers stay real.
    beforeEach(() => {
      vi.setSystemTime(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 60_000);
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('password reset: a known and an unknown address get the same answers, before and past the limit, and the known one gets five links', async () => {
      // Prepare
      const account = await createAccount(service);
      const unknown = `nobody-${randomUUID()}@example.com`;

      // Act
      const known = [];
      const unknowns = [];
      for (let i = 0; i <= LIMIT; i++) {
        known.push(await askReset(account.user.email));
        unknowns.push(await askReset(unknown));
      }

      // Assess: every answer alike, none sooner than the fixed delay
      for (const { reply, ms } of [...known, ...unknowns]) {
        expect(observed(reply)).toEqual({ status: 303, location: '/password-reset?done=reset-sent', text: '' });
        expect(ms).toBeGreaterThanOrEqual(700);
      }
      expect((await mailTo(service, account.user.email)).map((m) => m.subject)).toEqual(Array(LIMIT).fill('Reset your password'));
      expect(await mailTo(service, unknown)).toEqual([]);
    });

    it('counts sign-up, resend and reset together, under any spelling of the address', async () => {
      // Prepare: a sign-up (1), signed in while unconfirmed
      const email = `together-${randomUUID()}@example.com`;
      expect((await signUp(email)).reply.status).toBe(303);
      const b = new Browser(service.authUrl);
      expect((await signIn(b, { user: (await repos.users.findUserByEmail(email))!.user, password: PASSPHRASE })).status).toBe(303);

      // Act: two resends (3), a second sign-up with the address (its notice: 4), three resets (5, then refused)
      const replies: Reply[] = [];
      for (let i = 0; i < 2; i++) replies.push((await submit('/account', '/confirm-email/resend', {}, b)).reply);
      replies.push((await signUp(`  ${email.toUpperCase()} `)).reply);
      for (let i = 0; i < 3; i++) replies.push((await askReset(email.toUpperCase())).reply);
      const resendPast = (await submit('/account', '/confirm-email/resend', {}, b)).reply;

      // Assess: the answers say nothing of the limit; five messages left
      expect(replies.map((r) => [r.status, r.location])).toEqual([
        [303, '/confirm-email?done=resent'], [303, '/confirm-email?done=resent'], [303, '/signup?done=signed-up'],
        [303, '/password-reset?done=reset-sent'], [303, '/password-reset?done=reset-sent'], [303, '/password-reset?done=reset-sent'],
      ]);
      expect(resendPast).toMatchObject({ status: 303, location: '/confirm-email?done=resent' });
      // Sorted: with the clock stopped, the outbox cannot order them.
      expect((await mailTo(service, email)).map((m) => m.subject).sort()).toEqual([
        'Confirm your e-mail address', 'Confirm your e-mail address', 'Confirm your e-mail address',
        'Reset your password', 'Someone tried to create an account with your address',
      ]);
    });

    it('sign-up past the limit still creates the account, and says the same', async () => {
      // Prepare: the address has used its five e-mails on unknown-address resets
      const email = `late-${randomUUID()}@example.com`;
      for (let i = 0; i < LIMIT; i++) expect((await askReset(email)).reply.status).toBe(303);

      // Act
      const { reply } = await signUp(email);

      // Assess
      expect(reply).toMatchObject({ status: 303, location: '/signup?done=signed-up', text: '' });
      expect((await repos.users.findUserByEmail(email))!.user.email_confirmed).toBe(false);
      expect(await mailTo(service, email)).toEqual([]);
    });

    it('is taken atomically: of twenty concurrent requests, five send', async () => {
      // Prepare
      const account = await createAccount(service);

      // Act
      const replies = await Promise.all(Array.from({ length: 20 }, () => askReset(account.user.email)));

      // Assess
      for (const { reply } of replies) expect(reply.status).toBe(303);
      expect(await mailTo(service, account.user.email)).toHaveLength(LIMIT);
    });
  });
});
