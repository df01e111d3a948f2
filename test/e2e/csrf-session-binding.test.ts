import { describe, expect, it } from 'vitest';
import { Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

const REFUSED = 'This form has expired or was not sent from our page.';

/**
 * The CSRF token of a signed-in browser's forms is bound to its session (shared/http/csrf.ts): a
 * token handed out, planted or read before the sign-in, or on another session's page, is refused
 * after it, even sent as both cookie and field; the session-less pages keep their double-submit token.
 */
describe('CSRF tokens bound to the session', () => {
  const service = useTestService();
  const { repos: { sessions } } = useTable(service);

  /** A new account, a browser on the login page, and the double-submit token that page handed out. */
  async function beforeSignIn() {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    const preLogin = formFields((await b.get('/login')).text, '/login').csrf!;
    expect(b.jar.get('csrf')).toBe(preLogin);
    return { account, b, preLogin };
  }

  it('refuses the pre-login token after the sign-in, even sent again as both cookie and field, and keeps the session', async () => {
    // Prepare
    const { account, b, preLogin } = await beforeSignIn();
    expect((await signIn(b, account)).status).toBe(303);

    // Act: the value known before the sign-in, put back into the cookie and sent in the field.
    b.jar.set('csrf', preLogin);
    const logout = await b.postForm('/logout', { csrf: preLogin });
    const exported = await b.postForm('/account/export', { csrf: preLogin, account: account.user.id });

    // Assess
    expect(logout.status).toBe(403);
    expect(textOf(logout.text)).toContain(REFUSED);
    expect(exported.status).toBe(403);
    expect(logout.setCookies.some((c) => c.startsWith('session='))).toBe(false);
    expect((await b.get('/account')).status).toBe(200);
    expect((await sessions.listSessions(account.user.id)).length).toBe(1);
  });

  it('gives the signed-in pages a token of their own session: the page’s token works, another session’s does not', async () => {
    // Prepare: the same account signed in on two browsers.
    const { account, b, preLogin } = await beforeSignIn();
    expect((await signIn(b, account)).status).toBe(303);
    const other = new Browser(service.authUrl);
    expect((await signIn(other, account)).status).toBe(303);
    const mine = formFields((await b.get('/account/security')).text, '/account/security/sessions/end-others').csrf!;
    const theirs = formFields((await other.get('/account/security')).text, '/account/security/sessions/end-others').csrf!;

    // Act
    const withTheirs = await b.postForm('/logout', { csrf: theirs });
    const withMine = await b.postForm('/logout', { csrf: mine });

    // Assess
    expect(new Set([mine, theirs, preLogin]).size).toBe(3);
    expect(withTheirs.status).toBe(403);
    expect(withMine).toMatchObject({ status: 303, location: '/login' });
    expect((await other.get('/account')).status).toBe(200);
  });

  it('keeps the session-less forms on their double-submit token: a sign-in with the login page’s token works', async () => {
    // Prepare
    const { account, b, preLogin } = await beforeSignIn();

    // Act
    const wrong = await b.postForm('/login', { csrf: `${preLogin.slice(1)}x`, email: account.user.email, password: account.password, return_to: '/account' });
    const right = await b.postForm('/login', { csrf: preLogin, email: account.user.email, password: account.password, return_to: '/account' });

    // Assess
    expect(wrong.status).toBe(403);
    expect(right).toMatchObject({ status: 303, location: '/account' });
  });
});
