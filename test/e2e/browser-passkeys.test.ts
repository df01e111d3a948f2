import { GetCommand } from '#shared/data/commands';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { throttleKey } from '#shared/data/item-keys';
import { checkLayout, launchBrowser, type TestBrowser } from '../support/browser';
import { Browser, createAccount, formFields, textOf, type Account, type Reply } from '../support/oauth-client';
import { useTable, useTestService } from '../support/service';

/**
 * Passkeys in Chromium with a virtual authenticator (DevTools protocol: WebAuthn.enable,
 * WebAuthn.addVirtualAuthenticator; a platform authenticator with resident keys and user
 * verification, which answers without a touch): register one on the security page, sign in with it
 * through the browser's autofill and through the button, remove it; and the service's refusals of
 * answers taken from the real ceremony and replayed, re-aimed or tampered with over HTTP.
 */
describe('passkeys in a real browser', { timeout: 90_000 }, () => {
  const service = useTestService();
  const { doc } = useTable(service);
  let browser: TestBrowser;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let account: Account;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);
    cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    account = await createAccount(service);
  });
  beforeEach(async () => {
    await browser.context.clearCookies();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function signInWithPassword() {
    await page.goto(`${service.authUrl}/login`);
    await page.getByLabel('E-mail address').fill(account.user.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** Registers a passkey named `name` on the security page (signed in already). */
  async function addPasskey(name: string) {
    await page.goto(`${service.authUrl}/account/security`);
    await page.getByLabel('Name of the new passkey').fill(name);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Your passkey is added: use it to sign in.').waitFor();
  }

  /** The form post the page's script makes with the browser's answer, caught before it leaves: its fields. */
  async function catchAnswer(path: string, act: () => Promise<void>): Promise<Record<string, string>> {
    let body: string | null = null;
    await page.route(`${service.authUrl}${path}`, async (route) => {
      if (route.request().method() === 'POST') {
        body = route.request().postData();
        await route.abort();
      } else {
        await route.continue();
      }
    });
    try {
      await act();
      await expect.poll(() => body, { timeout: 10_000 }).not.toBeNull();
    } finally {
      await page.unroute(`${service.authUrl}${path}`);
    }
    return Object.fromEntries(new URLSearchParams(body!));
  }

  /** A browser of this test's process carrying the Chromium page's cookies (its CSRF cookie among them). */
  async function sameCookies(): Promise<Browser> {
    const b = new Browser(service.authUrl);
    for (const cookie of await browser.context.cookies(service.authUrl)) b.jar.set(cookie.name, cookie.value);
    return b;
  }

  const errorOf = (reply: Reply) => textOf(/<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(reply.text)?.[1] ?? '');
  const addressFailures = async () =>
    Number((await doc.send(new GetCommand({ TableName: service.tableName, Key: throttleKey('address', '127.0.0.1'), ConsistentRead: true }))).Item?.failures ?? 0);

  it('registers a passkey on the security page, listed by its name, as a discoverable credential', async () => {
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.goto(`${service.authUrl}/account/security`);
    await checkLayout(page, 'security page without a passkey');

    await addPasskey('Test laptop');

    await expect.poll(() => page.locator('#passkeys h3').allInnerTexts()).toEqual(['Test laptop']);
    await checkLayout(page, 'security page with a passkey');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.rpId).toBe('localhost');
    expect(Buffer.from(credentials[0]!.userHandle!, 'base64').toString()).toBe(account.user.id);
  });

  it('signs in with the passkey through the browser’s autofill of the e-mail field', async () => {
    // The page asks for the passkeys with conditional mediation as it loads; the virtual
    // authenticator, which needs no touch, answers it as a person picking the passkey from the
    // e-mail field's autofill would: no button is pressed, no password typed.
    await page.goto(`${service.authUrl}/login`);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect((await browser.context.cookies(service.authUrl)).find((c) => c.name === 'session')).toBeDefined();
  });

  it('signs in with the passkey through the button, without a password', async () => {
    // From here on this page's browser offers no autofill of passkeys (as one without conditional
    // mediation), so the sign-in page waits for its button.
    await page.addInitScript('PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);');
    await page.goto(`${service.authUrl}/login?return_to=%2Faccount%2Fsecurity`);
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    await checkLayout(page, 'sign-in page with the passkey button');
    const csrfBefore = (await browser.context.cookies(service.authUrl)).find((c) => c.name === 'csrf')?.value;

    await page.getByRole('button', { name: 'Use a passkey' }).click();

    await page.getByRole('heading', { name: 'Sign-in and security' }).waitFor();
    const cookies = await browser.context.cookies(service.authUrl);
    expect(cookies.find((c) => c.name === 'session')).toBeDefined();
    expect(cookies.find((c) => c.name === 'csrf')?.value).not.toBe(csrfBefore);
    await expect.poll(async () => textOf(await page.locator('#passkeys').innerHTML())).toContain('last used');
  });

  it('counts the passkey as the second step after the password', async () => {
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey instead' }).waitFor();
    await checkLayout(page, 'second-factor page with the passkey button');

    await page.getByRole('button', { name: 'Use a passkey instead' }).click();

    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect((await browser.context.cookies(service.authUrl)).find((c) => c.name === 'pending_sign_in')).toBeUndefined();
  });

  it('refuses a replayed answer, an expired challenge, another site’s answer, another user’s handle and malformed answers, counting each', async () => {
    // Prepare: three real answers of the ceremony, caught on their way to the service.
    const caught: Record<string, string>[] = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(`${service.authUrl}/login`);
      caught.push(await catchAnswer('/login/passkey', () => page.getByRole('button', { name: 'Use a passkey' }).click()));
    }
    const [forUnknown, forOtherSite, forExpiry] = caught as [Record<string, string>, Record<string, string>, Record<string, string>];
    const b = await sameCookies();
    const post = (fields: Record<string, string>, response = fields.response!) => b.postForm('/login/passkey', { ...fields, response });
    const parsed = (fields: Record<string, string>) => JSON.parse(fields.response!) as { response: Record<string, string> };
    const withClientData = (fields: Record<string, string>, change: (clientData: Record<string, string>) => void) => {
      const answer = parsed(fields);
      const clientData = JSON.parse(Buffer.from(answer.response.clientDataJSON!, 'base64url').toString()) as Record<string, string>;
      change(clientData);
      return JSON.stringify({ ...answer, response: { ...answer.response, clientDataJSON: Buffer.from(JSON.stringify(clientData)).toString('base64url') } });
    };
    const failuresBefore = await addressFailures();

    // Act and assess: one at a time, each refused with its reason and no session.
    const malformed = await post(forUnknown, 'not json');
    expect(malformed.status).toBe(401);
    expect(errorOf(malformed)).toBe('The browser’s passkey answer could not be read. Try again; if it keeps happening, use your password.');
    expect(errorOf(await post(forUnknown, JSON.stringify({ id: 'x', type: 'public-key' })))).toBe(errorOf(malformed));

    const otherUserId = (await createAccount(service)).user.id;
    const answer = parsed(forUnknown);
    const unknown = await post(forUnknown, JSON.stringify({ ...answer, response: { ...answer.response, userHandle: Buffer.from(otherUserId).toString('base64url') } }));
    expect(errorOf(unknown)).toBe('This passkey is not registered to an account here. Sign in with your password, then add the passkey on your account page.');

    const otherSite = await post(forOtherSite, withClientData(forOtherSite, (c) => { c.origin = 'https://evil.example'; }));
    expect(errorOf(otherSite)).toBe('This passkey answer was made for another site, and is not accepted here.');
    // That refusal spent its challenge: the untouched answer is a replay now.
    const replayed = await post(forOtherSite);
    expect(errorOf(replayed)).toBe('This passkey request has expired or was used already. Try again.');

    vi.setSystemTime(Date.now() + 5 * 60_000 + 1000);
    const expired = await post(forExpiry);
    expect(errorOf(expired)).toBe('This passkey request has expired or was used already. Try again.');
    vi.useRealTimers();

    expect(b.jar.get('session')).toBeUndefined();
    expect(await addressFailures()).toBe(failuresBefore + 6);
  });

  it('accepts a fresh answer once: the same answer again is refused', async () => {
    await page.goto(`${service.authUrl}/login`);
    const fields = await catchAnswer('/login/passkey', () => page.getByRole('button', { name: 'Use a passkey' }).click());
    const b = await sameCookies();

    const once = await b.postForm('/login/passkey', fields);
    const twice = await (await sameCookies()).postForm('/login/passkey', fields);

    expect(once).toMatchObject({ status: 303, location: '/account' });
    expect(twice.status).toBe(401);
    expect(errorOf(twice)).toBe('This passkey request has expired or was used already. Try again.');
  });

  it('refuses a registration answer made for another challenge or tampered with, writing nothing', async () => {
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey instead' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.goto(`${service.authUrl}/account/security`);
    await page.getByLabel('Name of the new passkey').fill('Second');
    // The virtual authenticator refuses a second passkey of the same account (excludeCredentials): a new authenticator makes it.
    const second = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false });
    const fields = await catchAnswer('/account/security/passkeys', () => page.getByRole('button', { name: 'Add a passkey' }).click());
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true });
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: second.authenticatorId });
    const b = await sameCookies();
    const securityPage = await b.get('/account/security');
    const form = formFields(securityPage.text, '/account/security/passkeys');

    const answer = JSON.parse(fields.response!) as { response: Record<string, string> };
    const clientData = JSON.parse(Buffer.from(answer.response.clientDataJSON!, 'base64url').toString()) as Record<string, string>;
    const otherSite = JSON.stringify({ ...answer, response: { ...answer.response, clientDataJSON: Buffer.from(JSON.stringify({ ...clientData, origin: 'https://evil.example' })).toString('base64url') } });

    const noName = await b.postForm('/account/security/passkeys', { ...form, name: ' ', response: fields.response! });
    const tampered = await b.postForm('/account/security/passkeys', { ...form, name: 'Second', response: otherSite });
    const used = await b.postForm('/account/security/passkeys', { ...form, name: 'Second', response: fields.response! });
    const noAnswer = await b.postForm('/account/security/passkeys', { ...form, name: 'Second', response: '' });

    expect(noName.status).toBe(400);
    expect(textOf(noName.text)).toContain('Give the passkey a name of 1 to 50 characters');
    expect(tampered.status).toBe(400);
    expect(textOf(tampered.text)).toContain('This passkey answer was made for another site, and is not accepted here.');
    expect(used.status).toBe(400);
    expect(textOf(used.text)).toContain('This passkey request has expired or was used already. Try again.');
    expect(noAnswer.status).toBe(400);
    expect(textOf(noAnswer.text)).toContain('Adding a passkey needs a browser that supports passkeys, with JavaScript on.');
    await page.reload();
    await expect.poll(() => page.locator('#passkeys h3').allInnerTexts()).toEqual(['Test laptop']);
  });

  it('removes the passkey after a recent sign-in, and asks to sign in again after an old one', async () => {
    // Signed in with the passkey just now (the test before): removal allowed.
    await page.goto(`${service.authUrl}/login`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.goto(`${service.authUrl}/account/security`);

    // An old sign-in: eleven minutes later the page asks to sign in again, and adds or removes nothing.
    vi.setSystemTime(Date.now() + 11 * 60_000);
    // Adding one is refused at its options, before the device makes a passkey: the sign-in form instead.
    await page.getByLabel('Name of the new passkey').fill('Too late');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('For your safety, this change to how you sign in needs a recent sign-in: nothing was changed yet.').waitFor();
    expect(new URL(page.url()).search).toBe('?again=yes&return_to=%2Faccount%2Fsecurity');
    await page.goto(`${service.authUrl}/account/security`);
    await page.getByRole('button', { name: 'Remove passkey Test laptop' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText('For your safety, this change to how you sign in needs a recent sign-in: nothing was changed yet.').waitFor();
    await checkLayout(page, 'sign-in page asking for a recent sign-in');
    vi.useRealTimers();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Sign-in and security' }).waitFor();

    await page.getByRole('button', { name: 'Remove passkey Test laptop' }).click();

    await page.getByText('The passkey is removed.').waitFor();
    expect(await page.locator('#passkeys h3').count()).toBe(0);
    // The authenticator still holds it, but the service no longer knows it.
    await signInWithPasswordThenPasskeyIsRefused();
  });

  /** With the passkey removed, the password alone signs in again, and the passkey is refused. */
  async function signInWithPasswordThenPasskeyIsRefused() {
    await browser.context.clearCookies();
    await page.goto(`${service.authUrl}/login`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByText('This passkey is not registered to an account here.').waitFor();
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
  }
});
