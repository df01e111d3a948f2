import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Browser, createAccount, formFields, textOf, type Reply } from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';

// The password strength estimate (zxcvbn, shared/domain/password-policy.ts) over HTTP: a guessable
// password gets the form again (400) with zxcvbn's reason, and nothing is stored or sent; a strong
// one goes through. Sign-up and a new password after a reset use the same policy.

describe('password strength over HTTP', () => {
  const service = useTestService();
  const { repos } = useTable(service);

  async function signUp(fields: Record<string, string>): Promise<Reply> {
    const b = new Browser(service.authUrl);
    const form = await b.get('/signup');
    expect(form.status).toBe(200);
    return b.postForm('/signup', { ...formFields(form.text, '/signup'), gender: '1', ...fields });
  }

  it.each([
    ['password123!', 'This is similar to a commonly used password.'],
    ['qwertyuiop', 'This is a frequently used password.'],
    ['Ixelmar1896!', 'There should not be any personal or page related data.'],
  ])('refuses the sign-up with %s: the form again (400) with zxcvbn\'s reason, no account, no mail', async (password, reason) => {
    const email = `weak-${randomUUID()}@example.com`;
    const reply = await signUp({ firstname: 'Quorvath', lastname: 'Ixelmar', email, password });

    expect(reply.status).toBe(400);
    const text = textOf(reply.text);
    expect(text).toContain(`This password is too easy to guess. ${reason}`);
    expect(reply.text).not.toContain(password); // the form is shown again without the password
    expect(reply.text).toContain(`value="${email}"`); // but with what else was typed
    expect(await repos.users.findUserByEmail(email)).toBeUndefined();
    expect(await mailTo(service, email)).toEqual([]);
  });

  it('accepts a sign-up with a strong passphrase', async () => {
    const email = `strong-${randomUUID()}@example.com`;
    const reply = await signUp({ firstname: 'Quorvath', lastname: 'Ixelmar', email, password: 'tide-pool saxophone marmalade' });

    expect(reply).toMatchObject({ status: 303, location: '/signup?done=signed-up' });
    expect(await repos.users.findUserByEmail(email)).toBeDefined();
    expect(await mailTo(service, email)).toHaveLength(1);
  });

  it('refuses a guessable new password after a reset, keeps the link usable, then takes a strong one', async () => {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    const request = await b.get('/password-reset');
    expect((await b.postForm('/password-reset', { ...formFields(request.text, '/password-reset'), email: account.user.email })).status).toBe(303);
    const token = linkToken(service, (await mailTo(service, account.user.email)).at(-1)!.text, '/password-reset/confirm');
    const page = await b.get(`/password-reset/confirm?token=${token}`);
    const fields = formFields(page.text, '/password-reset/confirm');

    const weak = await b.postForm('/password-reset/confirm', { ...fields, password: 'password123!' });
    expect(weak.status).toBe(400);
    expect(textOf(weak.text)).toContain('This password is too easy to guess. This is similar to a commonly used password.');
    const before = await repos.users.findUserByEmail(account.user.email);
    expect(before!.passwordHash).toBeDefined();

    const strong = await b.postForm('/password-reset/confirm', { ...fields, password: 'an orchard of quiet violins' });
    expect(strong).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    expect((await repos.users.findUserByEmail(account.user.email))!.passwordHash).not.toBe(before!.passwordHash);
  });
});
