import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '#local/seed';
import { readOutbox } from '#shared/email/outbox-mailer';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { useTestService } from '../support/service';

const ARTIFACTS = 'test-artifacts';
const AXE_SOURCE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1000, height: 700 };
const bob = DEMO_USERS[1]; // seeded with email_confirmed: false

/** The pages every run must have checked with axe (more may be checked). */
const REQUIRED_AXE_PAGES = [
  'sign-up', 'sign-up with errors', 'check-your-email notice', 'outbox', 'confirm page', 'login', 'account without apps',
  'developer console empty', 'secret page', 'app page', 'developer console with an app', 'consent page',
  'account with an authorized app', 'authorize error page', 'password reset request', 'new password', 'new password with error',
  'secret already shown', 'app page with a rotation error', 'new secret page', 'app page with a previous secret', 'delete confirmation',
  'delete confirmation with error',
];

interface AxeFinding {
  page: string;
  url: string;
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

describe('accounts and developer console in a real browser', { timeout: 60_000 }, () => {
  const service = useTestService();
  let browser: TestBrowser;
  let page: Page;
  let callback: { url: string; hits: URL[]; stop(): Promise<void> };
  const checkedPages: string[] = [];
  const findings: AxeFinding[] = [];
  /** What axe could not decide by itself (reported, not failed). */
  const needsReview: string[] = [];

  // The developer who signs up in the first test; the application they register.
  const email = `margaret-${randomUUID().slice(0, 8)}@example.com`;
  const developer = { firstname: 'Margaret', lastname: 'Hamilton', email, password: 'the eagle has landed on the sea of tranquility' };
  const app = { name: 'Moon Lander', description: 'Shows which of your devices are away, on the Moon.', website: 'https://moon-lander.example', clientId: '', clientSecret: '' };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    callback = await startCallbackServer();
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000); // a missing element fails its step, well before the test's time is up
  });

  beforeEach(async () => {
    // Every test starts signed out; a failed test leaves no session behind for the next.
    await browser.context.clearCookies();
  });

  afterAll(async () => {
    writeFileSync(join(ARTIFACTS, 'axe-accounts.json'), `${JSON.stringify({ checkedPages, findings, needsReview }, null, 2)}\n`);
    await browser?.close();
    await callback?.stop();
  });

  /**
   * Runs axe-core on the current page and records what it finds; fails on serious or critical
   * violations. axe is evaluated through the DevTools protocol, not added as a <script>: the
   * pages' Content-Security-Policy (default-src 'none') rightly refuses inline scripts.
   */
  async function checkAccessibility(label: string) {
    await page.evaluate(AXE_SOURCE);
    const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
    const found = results.violations.map((v) => ({
      page: label, url: page.url(), id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)),
    }));
    checkedPages.push(label);
    findings.push(...found);
    needsReview.push(...results.incomplete.map((r) => `${label}: ${r.id} (${r.impact ?? 'no impact'})`));
    expect(results.passes.length, `axe checked nothing on ${label}`).toBeGreaterThan(10);
    expect(found.filter((f) => f.impact === 'serious' || f.impact === 'critical'), `axe on ${label}`).toEqual([]);
  }

  async function phoneScreenshot(name: string) {
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
    await page.setViewportSize(DESKTOP);
  }

  /** The newest outbox message to `to` with this subject, as the outbox page shows it; opens its link. */
  async function openLinkFromOutbox(to: string, subject: string) {
    await page.goto(`${service.authUrl}/outbox`);
    await page.getByRole('heading', { name: 'Local outbox' }).waitFor();
    const message = page.locator('article').filter({ hasText: `To ${to},` }).filter({ has: page.getByRole('heading', { name: subject }) }).first();
    const link = message.getByRole('link');
    const href = await link.getAttribute('href');
    // The page shows what the mailer wrote: the same link is in the message file.
    const stored = (await readOutbox(service.outboxDir)).find((m) => m.to === to && m.subject === subject);
    expect(stored?.text).toContain(href);
    await link.click();
    return href!;
  }

  async function signIn(who: { email: string; password: string }) {
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail address').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signOut() {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  }

  /** Authorizes the application as `who` through login and consent; returns the callback the browser reached. */
  async function authorizeApp(who: { email: string; password: string }, state: string, onConsentPage?: () => Promise<void>) {
    const params = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: `${callback.url}/callback`, scope: 'read_user read_device', state,
    });
    await page.goto(`${service.authUrl}/oauth/authorize?${params}`);
    await signIn(who);
    await page.getByRole('heading', { name: `Allow ${app.name} to access your account?` }).waitFor();
    await onConsentPage?.();
    const consent = await page.locator('main').innerText();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.origin === callback.url);
    return { consent, reached: callback.hits.at(-1)! };
  }

  async function exchangeCode(code: string) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: `${callback.url}/callback`, client_id: app.clientId, client_secret: app.clientSecret,
      }),
    });
    const body = (await response.json()) as { access_token: string; refresh_token: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  }

  async function refresh(refreshToken: string) {
    const response = await fetch(`${service.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId, client_secret: app.clientSecret }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  async function getUser(accessToken: string) {
    const response = await fetch(`${service.apiUrl}/user`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  it('signs up (with a first attempt refused), confirms the address from the outbox, and signs in', async () => {
    await page.goto(`${service.authUrl}/signup`);
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await checkAccessibility('sign-up');
    await phoneScreenshot('signup-phone.png');

    await page.getByLabel('Last name').fill(developer.lastname);
    await page.getByLabel('E-mail address').fill('not-an-address');
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Give a valid e-mail address.').waitFor();
    expect(await page.getByLabel('First name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('Give your first name (up to 100 characters).').isVisible()).toBe(true);
    expect(await page.getByText('Use at least 10 characters.').isVisible()).toBe(true);
    expect(await page.getByLabel('Last name').inputValue()).toBe(developer.lastname);
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe(''); // never sent back
    await checkAccessibility('sign-up with errors');

    await page.getByLabel('First name').fill(developer.firstname);
    await page.getByLabel('E-mail address').fill(developer.email);
    await page.getByLabel('Password', { exact: true }).fill(developer.password);
    await page.getByLabel('Gender (optional)').selectOption({ label: 'Female' });
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await checkAccessibility('check-your-email notice');
    // The notice is a page of its own (POST-redirect-GET): reloading it signs up nothing and sends no second mail.
    expect(new URL(page.url()).search).toBe('?done=signed-up');
    await page.reload();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    expect((await readOutbox(service.outboxDir)).filter((m) => m.to === developer.email)).toHaveLength(1);

    await page.goto(`${service.authUrl}/outbox`);
    await checkAccessibility('outbox');
    const link = await openLinkFromOutbox(developer.email, 'Confirm your e-mail address');
    expect(link).toMatch(new RegExp(`^${service.authUrl}/confirm-email\\?token=[A-Za-z0-9_-]{43}$`));
    await page.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor();
    await checkAccessibility('confirm page');
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
    await checkAccessibility('address confirmed notice');
    await page.reload(); // a GET: not the used link again
    await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();

    await page.goto(`${service.authUrl}/login`);
    await checkAccessibility('login');
    await signIn(developer);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/account');
    const account = await page.locator('main').innerText();
    expect(account).toContain(`${developer.firstname} ${developer.lastname}`);
    expect(account).toMatch(new RegExp(`${developer.email}\\s+\\(confirmed\\)`));
    expect(account).toContain('No application has access to your account.');
    await checkAccessibility('account without apps');
  });

  it('registers an application in the developer console and shows its secret once', async () => {
    await page.goto(`${service.authUrl}/account`);
    await signIn(developer); // the account page sends a signed-out browser to the login first
    await page.getByRole('link', { name: 'Developer console' }).click();
    await page.getByRole('heading', { name: 'Developer console' }).waitFor();
    expect(await page.getByText('You have not registered an application yet.').isVisible()).toBe(true);
    await checkAccessibility('developer console empty');

    await page.getByLabel('Application name').fill(app.name);
    await page.getByLabel('Description (shown to users)').fill(app.description);
    await page.getByLabel('Website').fill(app.website);
    await page.getByLabel('Redirect URIs (one per line)').fill(`${callback.url}/callback`);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Application registered' }).waitFor();
    app.clientId = await page.locator('#client-id').innerText();
    app.clientSecret = await page.locator('#client-secret').innerText();
    expect(app.clientId).toMatch(/^[0-9a-f-]{36}$/);
    expect(app.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await checkAccessibility('secret page');

    // A reload asks for the page again (GET), which neither registers again nor shows the secret again.
    await page.reload();
    await page.getByRole('heading', { name: 'Client secret already shown' }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain(app.clientSecret);
    await checkAccessibility('secret already shown');
    await page.goto(`${service.authUrl}/developer/apps/${app.clientId}/secret`);
    await page.getByRole('heading', { name: 'Client secret already shown' }).waitFor();

    await page.getByRole('link', { name: `Back to ${app.name}` }).click();
    await page.getByRole('heading', { name: app.name }).waitFor();
    const appPage = await page.locator('main').innerText();
    expect(appPage).toContain(app.clientId);
    expect(appPage).not.toContain(app.clientSecret); // shown once only
    expect(await page.getByLabel('Redirect URIs (one per line)').inputValue()).toBe(`${callback.url}/callback`);
    await checkAccessibility('app page');

    await page.getByRole('link', { name: 'Back to your applications' }).click();
    await page.getByRole('heading', { name: 'Developer console' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: app.name }).innerText()).toContain(app.clientId);
    expect(await page.getByRole('row').count()).toBe(2); // the header and the one application
    await checkAccessibility('developer console with an app');
    await signOut();
  });

  it('lets an unconfirmed user authorize it after seeing what was registered; the API reports email_confirmed false', async () => {
    const state = randomUUID();

    const { consent, reached } = await authorizeApp({ email: bob.user.email, password: bob.password }, state, () => checkAccessibility('consent page'));
    const tokens = await exchangeCode(reached.searchParams.get('code') ?? '');
    const profile = await getUser(tokens.access_token);

    expect(consent).toContain(`${app.name}, by ${developer.firstname} ${developer.lastname} (${app.website})`);
    expect(consent).toContain(app.description);
    expect(consent).toContain(`You are signed in as ${bob.user.email}.`);
    expect(reached.searchParams.get('state')).toBe(state);
    expect(await page.locator('body').innerText()).toBe('Callback received.');
    expect(profile).toMatchObject({ id: bob.user.id, email: bob.user.email, firstname: 'Bob', email_confirmed: false });

    // Revoking on the account page ends the application's refresh token, which worked until then.
    const { status, body: rotated } = await refresh(tokens.refresh_token);
    expect(status).toBe(200);
    await page.goto(`${service.authUrl}/account`);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect(await page.locator('main').innerText()).toMatch(new RegExp(`${bob.user.email}\\s+\\(not confirmed\\)`));
    expect(await page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: app.name }) }).innerText())
      .toMatch(/Allowed on \d{4}-\d{2}-\d{2} to:\s+Read your profile \(name, e-mail address, avatar\)\s+See your devices/);
    await checkAccessibility('account with an authorized app');
    await phoneScreenshot('account-phone.png');
    await page.getByRole('button', { name: `Revoke access of ${app.name}` }).click();
    await page.getByText('No application has access to your account.').waitFor();
    const afterRevoke = await refresh(rotated.refresh_token!);
    expect(afterRevoke).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await signOut();
  });

  it('lets the confirmed user authorize it too; the API reports email_confirmed true', async () => {
    const { consent, reached } = await authorizeApp(developer, 'confirmed-user');
    const profile = await getUser((await exchangeCode(reached.searchParams.get('code') ?? '')).access_token);

    expect(consent).toContain(`You are signed in as ${developer.email}.`);
    expect(reached.searchParams.get('state')).toBe('confirmed-user');
    expect(profile).toMatchObject({
      email: developer.email, firstname: developer.firstname, lastname: developer.lastname, gender: 2, email_confirmed: true,
    });
    await page.goto(`${service.authUrl}/account`);
    await signOut();
  });

  it('shows an error page, without redirecting, for an unknown client', async () => {
    const params = new URLSearchParams({
      response_type: 'code', client_id: 'no-such-client', redirect_uri: `${callback.url}/callback`, scope: 'read_user', state: 's',
    });
    const hitsBefore = callback.hits.length;

    const response = await page.goto(`${service.authUrl}/oauth/authorize?${params}`);

    expect(response?.status()).toBe(400);
    await page.getByRole('heading', { name: 'Something went wrong' }).waitFor();
    expect(await page.getByRole('alert').innerText()).toBe('This application is not registered, so it cannot ask for access.');
    expect(callback.hits.length).toBe(hitsBefore);
    await checkAccessibility('authorize error page');
  });

  it('rotates the secret once confirmed, keeps the old one until retired, and deletes the application once its name is typed', async () => {
    /** The token endpoint's answer to these credentials (revoking an unknown token: 200 when they authenticate). */
    const authenticates = async (clientSecret: string) => (await fetch(`${service.authUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: randomUUID(), client_id: app.clientId, client_secret: clientSecret }),
    })).status;
    await page.goto(`${service.authUrl}/developer/apps/${app.clientId}`);
    await signIn(developer);
    await page.getByRole('heading', { name: app.name }).waitFor();

    await page.getByRole('button', { name: 'Generate a new client secret' }).click();
    await page.getByText('Tick the box to confirm that you want a new secret.').waitFor();
    await checkAccessibility('app page with a rotation error');
    await page.getByLabel('I understand, generate a new secret').check();
    await page.getByRole('button', { name: 'Generate a new client secret' }).click();
    await page.getByRole('heading', { name: 'New client secret' }).waitFor();
    const newSecret = await page.locator('#client-secret').innerText();
    expect(await page.locator('main').innerText()).toMatch(/The previous secret keeps working until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    await checkAccessibility('new secret page');
    expect([await authenticates(app.clientSecret), await authenticates(newSecret)]).toEqual([200, 200]);

    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByText('The previous secret still works until').waitFor();
    await checkAccessibility('app page with a previous secret');
    await page.getByRole('button', { name: 'Retire the previous secret now' }).click();
    await page.getByRole('heading', { name: app.name }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain('The previous secret still works');
    expect([await authenticates(app.clientSecret), await authenticates(newSecret)]).toEqual([401, 200]);
    app.clientSecret = newSecret;

    await page.getByRole('link', { name: 'Delete this application…' }).click();
    await page.getByRole('heading', { name: `Delete ${app.name}?` }).waitFor();
    await checkAccessibility('delete confirmation');
    await page.getByLabel(`Type the application’s name, ${app.name}, to confirm`).fill('Moon Landr');
    await page.getByRole('button', { name: 'Delete this application' }).click();
    await page.getByText('That is not the application’s name.').waitFor();
    await checkAccessibility('delete confirmation with error');
    expect(await authenticates(app.clientSecret)).toBe(200);
    await page.getByLabel(`Type the application’s name, ${app.name}, to confirm`).fill(app.name);
    await page.getByRole('button', { name: 'Delete this application' }).click();
    await page.getByText('You have not registered an application yet.').waitFor();
    expect(await authenticates(app.clientSecret)).toBe(401);
    await signOut();
  });

  it('resets a forgotten password through the e-mailed link, which works once', async () => {
    const newPassword = 'a brand new passphrase for the lunar module';
    await page.goto(`${service.authUrl}/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await checkAccessibility('password reset request');
    await page.getByLabel('E-mail address').fill(developer.email);
    await page.getByRole('button', { name: 'Send me a reset link' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await checkAccessibility('reset requested notice');

    const link = await openLinkFromOutbox(developer.email, 'Reset your password');
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await checkAccessibility('new password');
    await page.getByLabel('New password').fill(`${email.split('@')[0]} on the moon`);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Do not use your e-mail address in your password.').waitFor();
    expect(await page.getByLabel('New password').getAttribute('aria-invalid')).toBe('true');
    await checkAccessibility('new password with error');
    await page.getByLabel('New password').fill(newPassword);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    await checkAccessibility('password changed notice');

    const again = await page.goto(link);
    expect(again?.status()).toBe(400);
    await page.getByRole('heading', { name: 'Link expired' }).waitFor();
    await checkAccessibility('expired link');

    await page.goto(`${service.authUrl}/login`);
    await signIn(developer); // the old password
    await page.getByRole('alert').filter({ hasText: 'Incorrect e-mail address or password.' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await checkAccessibility('login with error');
    await signIn({ email: developer.email, password: newPassword });
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
  });

  it('checked every page with axe', () => {
    expect(REQUIRED_AXE_PAGES.filter((label) => !checkedPages.includes(label))).toEqual([]);
  });
});

/** The application's redirect target: a loopback server that records what reaches it. */
async function startCallbackServer() {
  const hits: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/callback') hits.push(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Callback</title><p>Callback received.</p></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as { port: number }).port}`;
  return {
    url,
    hits,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
