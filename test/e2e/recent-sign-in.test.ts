import { GetCommand } from '#shared/data/commands';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { challengeKey, totpKey, userKey } from '#shared/data/item-keys';
import { hashSecret } from '#shared/secrets';
import { Browser, createAccount, formFields, signIn, textOf, type Reply } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';
import { totpCodeAt as codeAt } from '../support/two-step';

const MINUTE = 60_000;

/**
 * A change to how the account signs in (a passkey or an authenticator app added or removed, the
 * account deleted) asks for a sign-in of the last 10 minutes: the page middleware sends an older
 * one, before the page runs, to the sign-in form, which says why and comes back to where the user was. The service runs in this process: the tests age a sign-in with vi.setSystemTime.
 */
describe('a change to how the account signs in, after an old sign-in', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  afterEach(() => {
    vi.useRealTimers();
  });

  const stored = async (key: { pk: string; sk: string }) =>
    (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;

  /** A new account signed in at `t` on a browser of its own. */
  async function signedInAt(t: number) {
    vi.setSystemTime(t);
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    return { b, account };
  }

  /** Sent to sign in again, to come back to `returnTo`: 303 from a form, 302 from a page. */
  function asksToSignInAgain(reply: Reply, returnTo: string, status = 303): void {
    expect(reply).toMatchObject({ status, location: `/login?again=yes&return_to=${encodeURIComponent(returnTo)}` });
  }

  it('refuses to add an authenticator app or a passkey, writes nothing, and comes back after a new sign-in', async () => {
    // Prepare: the enrolment started and the security page opened within the first minutes.
    const t = Date.now();
    const { b, account } = await signedInAt(t);
    const setup = await b.get('/account/security/totp');
    expect(setup.status).toBe(200);
    const secret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!.replace(/\s/g, '');
    const security = await b.get('/account/security');
    const addForm = formFields(security.text, '/account/security/passkeys');

    // Act: eleven minutes later.
    vi.setSystemTime(t + 11 * MINUTE);
    const setupAgain = await b.get('/account/security/totp');
    const confirm = await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: codeAt(secret, t + 11 * MINUTE) });
    const options = await b.postForm('/account/security/passkeys/options', { csrf: addForm.csrf! });
    const add = await b.postForm('/account/security/passkeys', { ...addForm, name: 'Laptop', response: '{}' });

    // Assess
    asksToSignInAgain(setupAgain, '/account/security/totp', 302);
    asksToSignInAgain(confirm, '/account/security/totp');
    asksToSignInAgain(options, '/account/security');
    asksToSignInAgain(add, '/account/security');
    expect(await stored(totpKey(account.user.id))).toBeUndefined();
    expect((await stored(userKey(account.user.id)))?.totpEnabled).toBeUndefined();
    expect((await stored(userKey(account.user.id)))?.passkeyCount ?? 0).toBe(0);

    // The link: the sign-in form says why, and brings the user back to the page.
    const again = await b.get('/login?again=yes&return_to=%2Faccount%2Fsecurity%2Ftotp');
    expect(again.status).toBe(200);
    expect(textOf(again.text)).toContain('For your safety, this change to how you sign in needs a recent sign-in: nothing was changed yet. Sign in again to continue.');
    const signedInAgain = await b.postForm('/login', { ...formFields(again.text, '/login'), email: account.user.email, password: account.password });
    expect(signedInAgain).toMatchObject({ status: 303, location: '/account/security/totp' });
    const fresh = await b.get('/account/security/totp');
    expect(fresh.status).toBe(200);
    expect(fresh.text).toContain('id="totp-secret"');
  });

  it('refuses to turn two-step sign-in off with a right code after an old sign-in, and keeps it on', async () => {
    // Prepare: enrolled just after the sign-in.
    const t = Date.now();
    const { b, account } = await signedInAt(t);
    const setup = await b.get('/account/security/totp');
    const secret = /id="totp-secret">([^<]+)</.exec(setup.text)![1]!.replace(/\s/g, '');
    expect((await b.postForm('/account/security/totp', { ...formFields(setup.text, '/account/security/totp'), code: codeAt(secret, t) })).status).toBe(303);
    const security = await b.get('/account/security');

    // Act
    vi.setSystemTime(t + 11 * MINUTE);
    const off = await b.postForm('/account/security/totp/remove', { ...formFields(security.text, '/account/security/totp/remove'), code: codeAt(secret, t + 11 * MINUTE) });

    // Assess
    asksToSignInAgain(off, '/account/security');
    expect(await stored(totpKey(account.user.id))).toBeDefined();
    expect((await stored(userKey(account.user.id)))?.totpEnabled).toBe(true);
  });

  it('lets a change through within the 10 minutes', async () => {
    // Prepare
    const t = Date.now();
    const { b, account } = await signedInAt(t);
    const security = await b.get('/account/security');

    // Act
    vi.setSystemTime(t + 9 * MINUTE);
    const options = await b.postForm('/account/security/passkeys/options', { csrf: formFields(security.text, '/account/security/passkeys').csrf! });

    // Assess
    expect(options.status).toBe(200);
    const { challenge } = JSON.parse(options.text) as { challenge: string };
    expect(await stored(challengeKey(hashSecret(challenge)))).toMatchObject({ userId: account.user.id });
  });
});
