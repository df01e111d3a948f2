import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { enrolAuthenticator } from '#shared/accounts/second-factor';
import { newTotpSecret } from '#shared/accounts/totp';
import { createFactorRepo } from '#shared/data/factor-repo';
import { createPasskeyRepo } from '#shared/data/passkey-repo';
import { hashSecret } from '#shared/secrets';
import { Browser, createAccount, formFields, signIn, textOf, type Account, type Reply } from '../support/oauth-client';
import { mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';
import { SoftwarePasskey } from '../support/software-passkey';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SUBJECT = 'New sign-in to your account';

/**
 * Sign-in alerts and the list of signed-in browsers, over HTTP: a browser the
 * account never signed in from gets its owner an e-mail (when, browser, address, the link to the
 * list), whichever way it signed in (password, password and code, passkey); the owner ends other
 * browsers' sessions from the security page.
 */
describe('sign-in alerts and signed-in browsers', () => {
  const service = useTestService();
  const { doc } = useTable(service);
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A browser of its own, which says it is Firefox on Windows. */
  const firefox = () => new Browser(service.authUrl);
  const withAgent = (b: Browser) => ({
    get: (path: string) => b.get(path, { 'user-agent': FIREFOX }),
    postForm: (path: string, fields: Record<string, string>) => b.postForm(path, fields, { 'user-agent': FIREFOX }),
  });
  async function signInAs(b: Browser, account: Account): Promise<Reply> {
    const ua = withAgent(b);
    const form = await ua.get('/login');
    return ua.postForm('/login', { ...formFields(form.text, '/login'), email: account.user.email, password: account.password });
  }
  const alerts = async (account: Account) => (await mailTo(service, account.user.email)).filter((m) => m.subject === SUBJECT);

  it('mails nothing at an account’s first sign-in, then an alert for each new browser, never for a browser it knows', async () => {
    // Prepare
    const account = await createAccount(service);
    const first = firefox();
    expect((await signInAs(first, account)).status).toBe(303);
    expect(await alerts(account)).toEqual([]);

    // Act
    const t = Date.parse('2026-11-27T09:15:00.000Z');
    vi.setSystemTime(t);
    const second = firefox();
    expect((await signInAs(second, account)).status).toBe(303);
    first.jar.absorb(['session=; Max-Age=0']); // signed out; its known-browser cookie stays
    expect((await signInAs(first, account)).status).toBe(303); // known: its cookie from the first sign-in

    // Assess
    const sent = await alerts(account);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain('  When: 2026-11-27 09:15:00 UTC\n  Browser: Firefox on Windows\n  Address: 127.0.0.1\n');
    expect(sent[0]!.text).toContain(`${service.authUrl}/account/security#sessions`);
  });

  it('lists the signed-in browsers on the security page, and signs another one out', async () => {
    // Prepare
    const account = await createAccount(service);
    const mine = firefox();
    const other = new Browser(service.authUrl);
    expect((await signInAs(mine, account)).status).toBe(303);
    expect((await signIn(other, account)).status).toBe(303);

    // Act
    const page = await withAgent(mine).get('/account/security');
    const rows = [...page.text.matchAll(/<li><h3>([\s\S]*?)<\/h3>\s*<p class="muted">(Signed in [^<]*)<\/p>/g)].map((m) => `${textOf(m[1]!)} | ${m[2]}`);
    const endPath = /action="(\/account\/security\/sessions\/[A-Za-z0-9_-]{43}\/end)"/.exec(page.text)![1]!;
    const ended = await mine.postForm(endPath, formFields(page.text, endPath));

    // Assess
    expect(rows).toHaveLength(2);
    expect(rows.filter((row) => row.includes('(this browser)'))).toEqual([expect.stringMatching(/^Firefox on Windows \(this browser\) \| Signed in .* UTC from 127\.0\.0\.1$/)]);
    expect(ended).toMatchObject({ status: 303, location: '/account/security?done=session-ended' });
    expect((await other.get('/account')).status).toBe(302);
    expect((await mine.get('/account')).status).toBe(200);
    expect(textOf((await mine.get(ended.location!)).text)).toContain('That browser is signed out.');
    // The same again, or another account's session: no such browser.
    expect((await mine.postForm(endPath, formFields(page.text, endPath))).status).toBe(404);
  });

  it('signs every other browser out at once: this one stays, and another account’s sessions too', async () => {
    // Prepare
    const account = await createAccount(service);
    const [mine, laptop, phone] = [firefox(), new Browser(service.authUrl), new Browser(service.authUrl)];
    for (const b of [mine, laptop, phone]) expect((await signIn(b, account)).status).toBe(303);
    const neighbour = new Browser(service.authUrl);
    expect((await signIn(neighbour, await createAccount(service))).status).toBe(303);
    const page = await mine.get('/account/security');
    const path = '/account/security/sessions/end-others';

    // Act
    const ended = await mine.postForm(path, formFields(page.text, path));

    // Assess
    expect(ended).toMatchObject({ status: 303, location: '/account/security?done=others-signed-out' });
    for (const b of [laptop, phone]) expect((await b.get('/account')).status).toBe(302);
    expect((await neighbour.get('/account')).status).toBe(200);
    const after = await mine.get(ended.location!);
    expect(textOf(after.text)).toContain('Every other browser is signed out');
    expect(after.text.match(/<li><h3>/g)).toHaveLength(1);
    // Alone now: no button to sign others out.
    expect(after.text).not.toContain(`action="${path}"`);
  });

  it('will not end another account’s session', async () => {
    const [owner, intruder] = [await createAccount(service), await createAccount(service)];
    const ownerBrowser = new Browser(service.authUrl);
    const intruderBrowser = new Browser(service.authUrl);
    expect((await signIn(ownerBrowser, owner)).status).toBe(303);
    expect((await signIn(intruderBrowser, intruder)).status).toBe(303);
    const ownerPage = await ownerBrowser.get('/account/security');
    const ownerSession = /"(\/account\/security\/sessions\/[^"]+)"/.exec(ownerPage.text);
    expect(ownerSession).toBeNull(); // the owner's only session is the current one: no form to end it
    const intruderPage = await intruderBrowser.get('/account/security');
    const path = `/account/security/sessions/${hashSecret(decodeURIComponent(ownerBrowser.jar.get('session')!))}/end`;

    const reply = await intruderBrowser.postForm(path, formFields(intruderPage.text, '/logout'));

    expect(reply.status).toBe(404);
    expect((await ownerBrowser.get('/account')).status).toBe(200);
  });

  it('alerts for a new browser after the second step, and after a passkey sign-in', async () => {
    // Prepare: an account that signed in before, with an authenticator app and a passkey
    const account = await createAccount(service);
    expect((await signIn(new Browser(service.authUrl), account)).status).toBe(303);
    const t = Date.now();
    vi.setSystemTime(t);
    const factors = createFactorRepo({ doc, table: service.tableName });
    const secret = newTotpSecret();
    await factors.startTotpEnrolment(account.user.id, secret, new Date(t));
    const code = (at: number) => generateSync({ secret, crypto, base32, epoch: Math.floor(at / 1000) });
    expect((await enrolAuthenticator(factors, account.user.id, secret, code(t), t)).outcome).toBe('enrolled');
    const passkey = new SoftwarePasskey(account.user.id);
    expect(await createPasskeyRepo({ doc, table: service.tableName }).addPasskey(account.user.id, passkey.stored())).toBe('added');

    // Act: password and code, from a new browser
    vi.setSystemTime(t + 30_000);
    const b = firefox();
    const password = await signInAs(b, account);
    const codePage = await withAgent(b).get(password.location!);
    const signedIn = await withAgent(b).postForm('/login/second-factor', { ...formFields(codePage.text, '/login/second-factor'), code: code(t + 30_000) });
    // and a passkey, from another new browser
    const p = firefox();
    const login = await withAgent(p).get('/login');
    const fields = formFields(login.text, '/login/passkey');
    const options = JSON.parse((await p.postForm('/login/passkey/options', { csrf: fields.csrf! })).text) as { challenge: string; rpId: string };
    const withPasskey = await withAgent(p).postForm('/login/passkey', { ...fields, response: passkey.answer(options.challenge, service.authUrl, options.rpId) });

    // Assess
    expect(password.location).toBe('/login/second-factor?return_to=%2Faccount');
    expect(signedIn).toMatchObject({ status: 303, location: '/account' });
    expect(options.rpId).toBe('localhost');
    expect(withPasskey).toMatchObject({ status: 303, location: '/account' });
    expect((await p.get('/account')).status).toBe(200);
    const sent = await alerts(account);
    expect(sent).toHaveLength(2);
    for (const message of sent) expect(message.text).toContain('Browser: Firefox on Windows');
  });
});
