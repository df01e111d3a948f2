import { describe, expect, it } from 'vitest';
import { DEMO_CLIENT } from '#local/seed';
import { Browser, createAccount, formFields, obtainCode, signIn, textOf, type Account, type Reply } from '../support/oauth-client';
import { linkToken, mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';

const EXPIRED = 'This reset link is invalid, expired or already used.';

/**
 * Password reset over HTTP on the local service: one used link ends the account's other links, and
 * the form's checkbox ends every connected application's access with the password change.
 */
describe('password reset', () => {
  const service = useTestService();
  const { repos } = useTable(service);

  /** Asks for a reset link for the account, as its owner would; returns the link's token from the e-mail. */
  async function requestLink(account: Account): Promise<string> {
    const b = new Browser(service.authUrl);
    const form = await b.get('/password-reset');
    const reply = await b.postForm('/password-reset', { ...formFields(form.text, '/password-reset'), email: account.user.email });
    expect(reply).toMatchObject({ status: 303, location: '/password-reset?done=reset-sent' });
    const mails = (await mailTo(service, account.user.email)).filter((m) => m.subject === 'Reset your password');
    return linkToken(service, mails.at(-1)!.text, '/password-reset/confirm');
  }

  /** Opens the link and posts its form with the new password and `fields` (the checkbox, when ticked). */
  async function useLink(token: string, password: string, fields: Record<string, string> = {}): Promise<Reply> {
    const b = new Browser(service.authUrl);
    const page = await b.get(`/password-reset/confirm?token=${token}`);
    if (page.status !== 200) return page;
    // The box "also sign out every connected application" is sent only when the test checks it (`fields`).
    const { sign_out_apps: _box, ...form } = formFields(page.text, '/password-reset/confirm');
    return b.postForm('/password-reset/confirm', { ...form, password, ...fields });
  }

  async function tokenRequest(params: Record<string, string>) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...params, client_id: DEMO_CLIENT.clientId, client_secret: DEMO_CLIENT.clientSecret }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  /** An account that authorized the demo application: a refresh token, and a code not exchanged yet. */
  async function connectedAccount() {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    const first = await obtainCode(b, {}, account);
    const exchange = await tokenRequest({ grant_type: 'authorization_code', code: first.code, redirect_uri: first.redirectUri });
    expect(exchange.status).toBe(200);
    const outstanding = await obtainCode(b, {}, account);
    return { account, refreshToken: exchange.body.refresh_token!, outstanding };
  }

  it('offers to sign out every connected application, checked by default', async () => {
    // Prepare
    const account = await createAccount(service);
    const token = await requestLink(account);

    // Act
    const page = await new Browser(service.authUrl).get(`/password-reset/confirm?token=${token}`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<input type="checkbox" name="sign_out_apps" value="yes"[^>]* checked>/);
    expect(textOf(page.text)).toContain('Also sign out every connected application');
  });

  it('using one of two reset links makes the other answer the expired-link page, on its form and on its POST', async () => {
    // Prepare: two links, both good until one is used
    const account = await createAccount(service);
    const first = await requestLink(account);
    const second = await requestLink(account);
    const secondBrowser = new Browser(service.authUrl);
    const secondForm = await secondBrowser.get(`/password-reset/confirm?token=${second}`);
    expect(secondForm.status).toBe(200);

    // Act
    const used = await useLink(first, 'the first new passphrase of the day');
    const reopened = await new Browser(service.authUrl).get(`/password-reset/confirm?token=${second}`);
    // The second link's form, opened before, posted after.
    const stalePost = await secondBrowser.postForm('/password-reset/confirm', {
      ...formFields(secondForm.text, '/password-reset/confirm'), password: 'a second new passphrase of the day',
    });

    // Assess: the password is the first link's; the second link changed nothing
    expect(used).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    for (const reply of [reopened, stalePost]) {
      expect(reply.status).toBe(400);
      expect(textOf(reply.text)).toContain(EXPIRED);
    }
    expect((await signIn(new Browser(service.authUrl), { ...account, password: 'the first new passphrase of the day' })).status).toBe(303);
    expect((await signIn(new Browser(service.authUrl), { ...account, password: 'a second new passphrase of the day' })).status).toBe(401);
  });

  it('a link asked for after a reset works: the next generation of links', async () => {
    // Prepare
    const account = await createAccount(service);
    expect(await useLink(await requestLink(account), 'one passphrase to start with')).toMatchObject({ status: 303 });

    // Act
    const again = await useLink(await requestLink(account), 'another passphrase after that');

    // Assess
    expect(again).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    expect((await signIn(new Browser(service.authUrl), { ...account, password: 'another passphrase after that' })).status).toBe(303);
  });

  it('with the box checked, the applications lose their refresh tokens and consents', async () => {
    // Prepare
    const { account, refreshToken } = await connectedAccount();

    // Act
    const reply = await useLink(await requestLink(account), 'a passphrase nobody else knows', { sign_out_apps: 'yes' });

    // Assess
    expect(reply).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    expect(await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await repos.grants.listConsentsByUser(account.user.id)).toEqual([]);
  });

  // The checkbox revokes exactly as the account page does: the consent first, which ends its grant
  // generation and with it every outstanding code.
  it('with the box checked, a code issued before the reset cannot be exchanged after it', async () => {
    // Prepare
    const { account, outstanding } = await connectedAccount();

    // Act
    expect(await useLink(await requestLink(account), 'a passphrase nobody else knows', { sign_out_apps: 'yes' })).toMatchObject({ status: 303 });
    const exchange = await tokenRequest({ grant_type: 'authorization_code', code: outstanding.code, redirect_uri: outstanding.redirectUri });

    // Assess
    expect(exchange).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('with the box unchecked, refresh tokens and outstanding codes keep working', async () => {
    // Prepare
    const { account, refreshToken, outstanding } = await connectedAccount();

    // Act: an unchecked box is not sent
    const reply = await useLink(await requestLink(account), 'a passphrase nobody else knows');

    // Assess
    expect(reply).toMatchObject({ status: 303, location: '/password-reset/confirm?done=password-changed' });
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken })).status).toBe(200);
    expect((await tokenRequest({ grant_type: 'authorization_code', code: outstanding.code, redirect_uri: outstanding.redirectUri })).status).toBe(200);
    expect((await repos.grants.listConsentsByUser(account.user.id)).map((c) => c.clientId)).toEqual([DEMO_CLIENT.clientId]);
  });

  it('a refused new password ends nothing, and the form keeps the box as the user left it', async () => {
    // Prepare
    const { account, refreshToken } = await connectedAccount();
    const token = await requestLink(account);

    // Act: too short, once with the box checked, once unchecked
    const checked = await useLink(token, 'short', { sign_out_apps: 'yes' });
    const unchecked = await useLink(token, 'short');

    // Assess
    for (const refused of [checked, unchecked]) expect(refused.status).toBe(400);
    expect(checked.text).toMatch(/name="sign_out_apps"[^>]* checked>/);
    expect(unchecked.text).toMatch(/name="sign_out_apps"/);
    expect(unchecked.text).not.toMatch(/name="sign_out_apps"[^>]* checked>/);
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken })).status).toBe(200);
    expect(await useLink(token, 'a long enough passphrase this time')).toMatchObject({ status: 303 });
  });
});
