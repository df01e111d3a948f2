import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '#local/chromium';
import type { ExampleApp } from '#local/example-app';
import type { LocalService } from '#local/service';

// `npm run screenshots`: the pages a user meets, at a phone's and a desktop's width, as PNGs of
// the viewport in docs/screenshots/. Runs its own service (free ports, a temporary state folder,
// DynamoDB Local in memory) and its own example app, so a running `npm start` is not disturbed.

const USAGE = `Usage: npm run screenshots [-- --out <folder>]

Starts the local service and the example app on free ports, drives Chromium through the login,
consent, account, developer console, error and example-app pages as the demo user, and writes
<page>-390.png and <page>-1280.png (the viewport only) into docs/screenshots/ or <folder>.`;

const VIEWPORTS = [{ width: 390, height: 844 }, { width: 1280, height: 800 }];

// The service's request log would drown the list of files: warnings and errors only, unless asked.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
const { createClientRepo } = await import('#shared/data/client-repo');
const { createDocumentClient } = await import('#shared/data/dynamodb');
const { startExampleApp } = await import('#local/example-app');
const { DEMO_CLIENT, DEMO_TV_CLIENT, DEMO_USERS } = await import('#local/seed');
const { startLocalService } = await import('#local/service');
const [alice] = DEMO_USERS;

function parseArgs(argv: string[]): { out: string } {
  let out = 'docs/screenshots';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg === '--out' && argv[i + 1]) {
      out = argv[++i]!;
    } else {
      console.error(`Unknown argument '${arg}' (npm run screenshots -- --help shows the usage).`);
      process.exit(2);
    }
  }
  return { out: resolve(out) };
}

async function shoot(page: Page, out: string, name: string, width: number): Promise<void> {
  const path = join(out, `${name}-${width}.png`);
  await page.screenshot({ path, fullPage: false, animations: 'disabled' });
  console.log(`  ${path}`);
}

/** One pass through the pages at one viewport, in a fresh browser context (signed out). */
async function walk(browser: Browser, service: LocalService, app: ExampleApp, out: string, viewport: { width: number; height: number }) {
  const context = await browser.newContext({ viewport, locale: 'en-GB', deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const { width } = viewport;

    await page.goto(app.url);
    await page.getByRole('link', { name: 'Connect your devices' }).waitFor();
    await shoot(page, out, 'example-app-start', width);
    await page.getByRole('link', { name: 'Connect your devices' }).click();

    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail address').fill(alice.user.email);
    await shoot(page, out, 'login', width);
    await page.getByLabel('Password').fill(alice.password);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await shoot(page, out, 'consent', width);
    await page.getByRole('button', { name: 'Allow' }).click();

    await page.getByRole('heading', { name: /^Hello / }).waitFor();
    await page.locator('img.avatar').evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    await shoot(page, out, 'example-app-devices', width);

    await page.goto(`${service.authUrl}/account`);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await shoot(page, out, 'account', width);
    // Withdraw the access again, so that the next pass sees the consent page too.
    await page.getByRole('button', { name: /^Revoke access of / }).click();
    await page.getByText('No application has access to your account.').waitFor();

    await page.goto(`${service.authUrl}/developer`);
    await page.getByRole('heading', { name: 'Developer console' }).waitFor();
    await shoot(page, out, 'developer-console', width);

    // A TV's request (the demo device application), entered on the phone or computer.
    const started = await fetch(`${service.authUrl}/oauth/device_authorization`, {
      method: 'POST', body: new URLSearchParams({ client_id: DEMO_TV_CLIENT.clientId, scope: 'read_user read_device' }),
    });
    const { verification_uri_complete: verificationUri } = (await started.json()) as { verification_uri_complete: string };
    await page.goto(verificationUri);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await shoot(page, out, 'device-consent', width);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Request denied' }).waitFor();

    await page.goto(`${service.authUrl}/no-such-page`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await shoot(page, out, 'error-404', width);
  } finally {
    await context.close();
  }
}

const { out } = parseArgs(process.argv.slice(2));
mkdirSync(out, { recursive: true });
const stateDir = mkdtempSync(join(tmpdir(), 'dus-screenshots-'));
const stops: (() => Promise<unknown>)[] = [async () => rmSync(stateDir, { recursive: true, force: true })];
let failed = false;
try {
  const service = await startLocalService({ apiPort: 0, authPort: 0, stateDir });
  stops.push(() => service.stop());
  const app = await startExampleApp({
    port: 0, authUrl: service.authUrl, apiUrl: service.apiUrl, clientId: DEMO_CLIENT.clientId, clientSecret: DEMO_CLIENT.clientSecret,
  });
  stops.push(() => app.stop());
  // The example app runs on a free port: register its callback, as a developer would in the console.
  const doc = createDocumentClient({ endpoint: service.dynamodbEndpoint });
  try {
    const clients = createClientRepo({ doc, table: service.tableName });
    const registered = await clients.getClient(DEMO_CLIENT.clientId);
    if (!registered) throw new Error('the demo client is not seeded');
    await clients.updateClient(registered.developerId, registered.clientId, { redirectUris: [...registered.redirectUris, `${app.url}/callback`] });
  } finally {
    doc.destroy();
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  stops.push(() => browser.close());
  console.log(`Writing screenshots to ${out}:`);
  for (const viewport of VIEWPORTS) await walk(browser, service, app, out, viewport);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const stop of stops.reverse()) await stop().catch((error: unknown) => console.error(error));
}
process.exit(failed ? 1 : 0);
