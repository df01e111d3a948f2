import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchBrowser, type TestBrowser } from '../support/browser';
import { createAccount } from '../support/oauth-client';
import { mailTo } from '../support/outbox';
import { useTable, useTestService } from '../support/service';

// "Download my data" and "Delete the account" in Chromium, as a person does them from the account
// page: each page checked with axe (WCAG 2.1 A/AA) at 390 and 1280 px, without sideways scrolling.

const validate = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync('docs/export.schema.json', 'utf8')) as object);

describe('the account’s data in a real browser', { timeout: 60_000 }, () => {
  const service = useTestService();
  const { repos } = useTable(service);
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** The page as it is, at a phone's width and a desktop's: no WCAG violation, nothing wider than the window. */
  async function checkPage(label: string) {
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 844 });
      expect(await accessibilityViolations(page), `${label} at ${width} px`).toEqual([]);
      expect(await page.evaluate('document.documentElement.scrollWidth'), `${label} at ${width} px`).toBe(width);
    }
  }

  async function signIn(email: string, password: string) {
    await page.goto(`${service.authUrl}/login?return_to=%2Faccount`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
  }

  it('downloads my data from the account page, then deletes the account: a wrong password first, then the right one', async () => {
    const account = await createAccount(service);
    await signIn(account.user.email, account.password);
    await checkPage('account page with its data card');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^account-export-\d{4}-\d{2}-\d{2}\.json$/);
    const chunks: Buffer[] = [];
    for await (const chunk of (await download.createReadStream())) chunks.push(chunk as Buffer);
    const document = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { profile: { id: string } };
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(document.profile.id).toBe(account.user.id);
    expect(Buffer.concat(chunks).toString('utf8')).not.toContain(account.password);

    await page.getByRole('link', { name: 'Delete the account' }).click();
    await page.getByRole('heading', { name: 'Delete the account' }).waitFor();
    await expect(page.locator('main').innerText()).resolves.toContain('keep a copy of its data for 35 days');
    await checkPage('delete page');

    await page.getByLabel('Your password').fill('not my password');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByText('Incorrect password. The account was not deleted.').waitFor();
    await checkPage('delete page with a wrong password');
    expect(await repos.users.findUserByEmail(account.user.email)).toBeDefined();

    await page.getByLabel('Your password').fill(account.password);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByRole('heading', { name: 'Account deleted' }).waitFor();
    await checkPage('account deleted notice');
    expect(await repos.users.findUserByEmail(account.user.email)).toBeUndefined();
    expect((await mailTo(service, account.user.email)).map((m) => m.subject)).toEqual(['Your account has been deleted']);
    // Signed out: the account page asks for a login.
    await page.goto(`${service.authUrl}/account`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });
});
