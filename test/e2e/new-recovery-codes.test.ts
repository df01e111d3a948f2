import { GetCommand } from '#shared/data/commands';
import { describe, expect, it } from 'vitest';
import { recoveryCodesKey, recoveryRevealKey, totpKey } from '#shared/data/item-keys';
import { Browser, createAccount, formFields, signIn, textOf } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';
import { enrolAuthenticatorApp, secondStep } from '../support/two-step';

const CODE = /<li><code>([a-z0-9-]+)<\/code><\/li>/g;

/**
 * New recovery codes, two-step sign-in staying on: made from the security page after a recent
 * sign-in, shown once, the old ones void; the page warns when few are left.
 */
describe('new recovery codes', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  const stored = async (key: { pk: string; sk: string }) =>
    (await doc.send(new GetCommand({ TableName: service.tableName, Key: key, ConsistentRead: true }))).Item;

  /** A new account signed in on a browser of its own. */
  async function signedIn() {
    const account = await createAccount(service);
    const b = new Browser(service.authUrl);
    expect((await signIn(b, account)).status).toBe(303);
    return { account, b };
  }

  /** Sends the security page's form for new recovery codes. */
  async function makeNew(b: Browser) {
    const page = await b.get('/account/security');
    return b.postForm('/account/security/recovery-codes', formFields(page.text, '/account/security/recovery-codes'));
  }

  it('replaces the codes without turning two-step sign-in off: ten new ones shown once, the old ones refused, a new one accepted', async () => {
    // Prepare
    const { account, b } = await signedIn();
    const { recoveryCodes: old } = await enrolAuthenticatorApp(b);
    const app = await stored(totpKey(account.user.id));

    // Act
    const made = await makeNew(b);
    const shown = await b.get('/account/security/recovery-codes');

    // Assess
    expect(made).toMatchObject({ status: 303, location: '/account/security/recovery-codes' });
    const fresh = [...shown.text.matchAll(CODE)].map((m) => m[1]!);
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((code) => old.includes(code))).toEqual([]);
    expect(textOf(shown.text)).toContain('These codes replace any you had before.');
    expect(textOf((await b.get('/account/security/recovery-codes')).text)).toContain('were shown once already');
    expect(await stored(totpKey(account.user.id))).toEqual(app);
    expect(((await stored(recoveryCodesKey(account.user.id)))!.codes as Set<string>).size).toBe(10);
    const withOld = new Browser(service.authUrl);
    expect((await secondStep(withOld, (await signIn(withOld, account)).location!, old[0]!)).status).toBe(401);
    const withNew = new Browser(service.authUrl);
    expect((await secondStep(withNew, (await signIn(withNew, account)).location!, fresh[0]!)).status).toBe(303);
  });

  it('writes nothing for an account without an authenticator app, nor for a form without the session’s CSRF token', async () => {
    // Prepare
    const { account, b } = await signedIn();
    const page = await b.get('/account/security');

    // Act
    const withoutApp = await b.postForm('/account/security/recovery-codes', { csrf: formFields(page.text, '/account/security/passkeys').csrf! });
    const { recoveryCodes } = await enrolAuthenticatorApp(b);
    const forged = await b.postForm('/account/security/recovery-codes', { csrf: 'forged' });

    // Assess
    expect(withoutApp).toMatchObject({ status: 303, location: '/account/security' });
    expect(forged.status).toBe(403);
    expect(textOf(forged.text)).toContain('This form has expired or was not sent from our page.');
    expect(recoveryCodes).toHaveLength(10);
    expect(((await stored(recoveryCodesKey(account.user.id)))!.codes as Set<string>).size).toBe(10);
    expect(await stored(recoveryRevealKey(account.user.id))).toBeUndefined();
  });

  it('warns on the security page when three codes or fewer are left, and offers new ones', async () => {
    // Prepare: seven of ten codes used to sign in.
    const { account, b } = await signedIn();
    const { recoveryCodes } = await enrolAuthenticatorApp(b);
    expect(textOf((await b.get('/account/security')).text)).toContain('10 recovery codes left.');
    for (const code of recoveryCodes.slice(0, 7)) {
      const other = new Browser(service.authUrl);
      expect((await secondStep(other, (await signIn(other, account)).location!, code)).status).toBe(303);
    }

    // Act
    const page = await b.get('/account/security');

    // Assess
    expect(textOf(page.text)).toContain('Only 3 recovery codes left: make new ones before you run out.');
    expect(formFields(page.text, '/account/security/recovery-codes').csrf).toBeDefined();
  });
});
