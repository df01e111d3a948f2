import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkLayout, launchBrowser, type TestBrowser } from '../support/browser';
import { createAccount } from '../support/oauth-client';
import { useTestService } from '../support/service';
import { totpCodeAt as codeAt } from '../support/two-step';

/**
 * Two-step sign-in in Chromium, as a person does it: set up the authenticator app from the page,
 * note the recovery codes, sign in with the password and the app's code, and every new page fits a
 * phone and a desktop with no WCAG 2.1 A/AA violation found by axe. The service's clock (this
 * process's) moves on 30 s where the next code is needed.
 */
describe('two-step sign-in in a real browser', { timeout: 90_000 }, () => {
  const service = useTestService();
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await browser?.close();
  });

  async function signInWithPassword(account: { user: { email: string }; password: string }) {
    await page.goto(`${service.authUrl}/login`);
    await page.getByLabel('E-mail address').fill(account.user.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('sets up the app, shows the recovery codes once, signs in with the app’s code, and turns it off; every page axe clean', async () => {
    const t = Date.now();
    vi.setSystemTime(t);
    const account = await createAccount(service);
    await signInWithPassword(account);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();

    // The security page, off
    await page.getByRole('link', { name: 'Sign-in and security' }).click();
    await page.getByRole('heading', { name: 'Sign-in and security' }).waitFor();
    await checkLayout(page, 'security page, two-step sign-in off');

    // Set up: the QR code's image is shown, and its key typed into the "app" (this test)
    await page.getByRole('link', { name: 'Set up an authenticator app' }).click();
    await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
    const qr = page.getByRole('img', { name: 'QR code to add this account to an authenticator app' });
    // The image loaded (the CSP allows it: a data: URL) and has the size of a QR code's SVG.
    expect(await qr.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
    await checkLayout(page, 'authenticator setup');
    const secret = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '');
    expect(await page.getByLabel('Code from the app').getAttribute('inputmode')).toBe('numeric'); // a phone's digit keyboard
    await page.getByLabel('Code from the app').fill('000000' === codeAt(secret, t) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await page.getByText('That code is not right.').waitFor();
    await checkLayout(page, 'authenticator setup with a wrong code');
    await page.getByLabel('Code from the app').fill(codeAt(secret, t));
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();

    // The recovery codes, once
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = (await page.locator('#recovery-codes li').allInnerTexts()).map((text) => text.trim());
    expect(codes).toHaveLength(10);
    await checkLayout(page, 'recovery codes');
    await page.reload();
    await page.getByText('Your recovery codes were shown once already').waitFor();
    await checkLayout(page, 'recovery codes already shown');
    await page.getByRole('link', { name: 'Sign-in and security' }).click();
    await page.getByText('10 recovery codes left.').waitFor();
    await checkLayout(page, 'security page, two-step sign-in on');

    // Sign out, and in again: the password, then the app's next code
    await page.getByRole('button', { name: 'Sign out' }).click();
    vi.setSystemTime(t + 30_000);
    await signInWithPassword(account);
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await checkLayout(page, 'second-factor page');
    await page.getByLabel('Code').fill('12345');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Enter the 6-digit code your authenticator app shows').first().waitFor();
    await checkLayout(page, 'second-factor page with an error');
    await page.getByLabel('Code').fill(codeAt(secret, t + 30_000));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();

    // Turn it off with the next code
    vi.setSystemTime(t + 60_000);
    await page.goto(`${service.authUrl}/account/security`);
    await page.getByLabel('A code from your authenticator app, or a recovery code').fill('12345');
    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.getByRole('alert').getByRole('link', { name: /^Enter the 6-digit code/ }).waitFor();
    await checkLayout(page, 'security page with a wrong code');
    await page.getByLabel('A code from your authenticator app, or a recovery code').fill(codeAt(secret, t + 60_000));
    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.getByText('Two-step sign-in is off').waitFor();
  });
});
