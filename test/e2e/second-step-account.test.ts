import { describe, expect, it } from 'vitest';
import { PASSKEY_REFUSALS } from '#shared/accounts/passkeys';
import { randomToken } from '#shared/secrets';
import { Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { useTestService } from '../support/service';
import { addPasskey, enrolAuthenticatorApp, nextTotpCode } from '../support/two-step';

/**
 * The second step of a sign-in is the account's own: its page names the account signing in (and
 * only for a live pending sign-in), and a passkey used there must be of that account.
 */
describe('the second step of a sign-in', () => {
  const service = useTestService();

  /** An account with an authenticator app, and a new browser at its second step: that browser, and the page's path. */
  async function atSecondStep() {
    const account = await createAccount(service);
    const enrolling = new Browser(service.authUrl);
    expect((await signIn(enrolling, account)).status).toBe(303);
    const { secret } = await enrolAuthenticatorApp(enrolling);
    const b = new Browser(service.authUrl);
    const password = await signIn(b, account);
    expect(password).toMatchObject({ status: 303, location: '/login/second-factor?return_to=%2Faccount' });
    return { account, secret, b, location: password.location! };
  }

  it('names the account signing in, on the page and after a wrong code; a cookie that merely names a user shows no address', async () => {
    // Prepare
    const { account, b, location } = await atSecondStep();
    const forger = new Browser(service.authUrl);
    forger.jar.set('pending_sign_in', `${account.user.id}.${randomToken()}`);

    // Act
    const page = await b.get(location);
    const wrong = await b.postForm('/login/second-factor', { ...formFields(page.text, '/login/second-factor'), code: '000000' });
    const forged = await forger.get(location);

    // Assess
    expect(page.status).toBe(200);
    expect(textOf(page.text)).toContain(`Signing in as ${account.user.email} .`);
    expect(wrong.status).toBe(401);
    expect(textOf(wrong.text)).toContain(`Signing in as ${account.user.email} .`);
    expect(forged).toMatchObject({ status: 302, location: '/login?return_to=%2Faccount' });
    expect(forged.text).not.toContain(account.user.email);
  });

  it('refuses a passkey of another account on the second step: no session, the sign-in still waits for its own factor', async () => {
    // Prepare: another account with a passkey, whose holder is at the first account's second step.
    const { account, secret, b, location } = await atSecondStep();
    const other = await createAccount(service);
    const otherBrowser = new Browser(service.authUrl);
    expect((await signIn(otherBrowser, other)).status).toBe(303);
    const otherPasskey = await addPasskey(otherBrowser, other.user.id, 'Other laptop');
    const page = await b.get(location);
    const fields = formFields(page.text, '/login/passkey');
    expect(fields.second_step).toBe('yes');
    const { challenge, rpId } = JSON.parse((await b.postForm('/login/passkey/options', { csrf: fields.csrf! })).text) as { challenge: string; rpId: string };

    // Act
    const refused = await b.postForm('/login/passkey', { ...fields, response: otherPasskey.answer(challenge, new URL(service.authUrl).origin, rpId) });

    // Assess
    expect(refused.status).toBe(401);
    expect(textOf(refused.text)).toContain(PASSKEY_REFUSALS['other-account']);
    expect(textOf(refused.text)).toContain('Two-step sign-in');
    expect(refused.setCookies.some((c) => c.startsWith('session='))).toBe(false);
    expect(b.jar.get('session')).toBeUndefined();
    expect((await b.get('/account')).status).toBe(302);
    // The account's own factor still completes the same sign-in.
    const retry = await b.get(location);
    const code = await b.postForm('/login/second-factor', { ...formFields(retry.text, '/login/second-factor'), code: nextTotpCode(secret) });
    expect(code).toMatchObject({ status: 303, location: '/account' });
    expect(textOf((await b.get('/account')).text)).toContain(account.user.email);
  });
});
