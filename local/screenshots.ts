import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { base32 } from '@otplib/plugin-base32-scure';
import { crypto } from '@otplib/plugin-crypto-node';
import { generateSync } from '@otplib/totp';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '#local/chromium';
import type { ExampleApp } from '#local/example-app';
import type { LocalService } from '#local/service';

// `npm run screenshots`: the pages a user meets, at a phone's and a desktop's width, as PNGs of
// the viewport in docs/screenshots/. Runs its own service (free ports, a temporary state folder,
// DynamoDB Local in memory) and its own example app, so a running `npm start` is not disturbed.

const USAGE = `Usage: npm run screenshots [-- --out <folder>]

Starts the local service and the example app on free ports, drives Chromium through the login,
consent, account, developer console, error and example-app pages as the demo user Alice, and through
the sign-in and security pages as Bob (who adds two passkeys and an authenticator app on the way),
and writes <page>-390.png and <page>-1280.png (the viewport only; the whole of the security page)
into docs/screenshots/ or <folder>.`;

const VIEWPORTS = [{ width: 390, height: 844 }, { width: 1280, height: 800 }];

// The service's request log would drown the list of files: warnings and errors only, unless asked.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
const { createClientRepo } = await import('#shared/data/client-repo');
const { createDocumentClient } = await import('#shared/data/dynamodb');
const { startExampleApp } = await import('#local/example-app');
const { DEMO_CLIENT, DEMO_TV_CLIENT, DEMO_USERS } = await import('#local/seed');
const { startLocalService } = await import('#local/service');
const [alice, bob] = DEMO_USERS;
const CONTEXT_OPTIONS = { locale: 'en-GB', deviceScaleFactor: 1 } as const;
// The other browser in Bob's list of signed-in browsers: a phone's Safari, as a person would have.
const PHONE_USER_AGENT = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1';

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

async function shoot(page: Page, out: string, name: string, width: number, fullPage = false): Promise<void> {
  const path = join(out, `${name}-${width}.png`);
  await page.screenshot({ path, fullPage, animations: 'disabled' });
  console.log(`  ${path}`);
}

/** The page as it is now, at each viewport in turn (the same page resized: it holds a state a new context would lose). */
async function shootEachWidth(page: Page, out: string, name: string, fullPage = false): Promise<void> {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await shoot(page, out, name, viewport.width, fullPage);
  }
}

async function signIn(page: Page, service: LocalService, account: { user: { email: string }; password: string }): Promise<void> {
  await page.goto(`${service.authUrl}/login`);
  await page.getByLabel('E-mail address').fill(account.user.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Bob's strong sign-in, prepared through the pages as he would: signed in on his phone and here, two
 * passkeys added (each made by its own virtual authenticator of Chromium's DevTools protocol, as the
 * browser tests do: an authenticator refuses a second passkey of the same account), the authenticator
 * app set up (its code computed from the key the page shows); then his security page, and the second
 * step of his next sign-in. Run once, after the walks: Alice's sign-ins stay password-only.
 */
async function walkSecurity(browser: Browser, service: LocalService, out: string): Promise<void> {
  const contexts: BrowserContext[] = [];
  const open = async (options: { userAgent?: string } = {}) => {
    const context = await browser.newContext({ ...CONTEXT_OPTIONS, viewport: VIEWPORTS[0], ...options });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  };
  try {
    const phone = await open({ userAgent: PHONE_USER_AGENT });
    await signIn(phone, service, bob);
    await phone.getByRole('heading', { name: 'Your account' }).waitFor();

    const page = await open();
    await signIn(page, service, bob);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    for (const name of ['Work laptop', 'Phone']) {
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      await page.goto(`${service.authUrl}/account/security`);
      await page.getByLabel('Name of the new passkey').fill(name);
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Your passkey is added: use it to sign in.').waitFor();
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    }

    await page.getByRole('link', { name: 'Set up an authenticator app' }).click();
    const qr = page.getByRole('img', { name: 'QR code to add this account to an authenticator app' });
    await qr.evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    await shootEachWidth(page, out, 'authenticator-setup');
    const secret = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '');
    await page.getByLabel('Code from the app').fill(generateSync({ secret, crypto, base32, epoch: Math.floor(Date.now() / 1000) }));
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();

    await page.getByRole('link', { name: 'I have saved them' }).click();
    await page.getByText('10 recovery codes left.').waitFor();
    // The whole page: its passkeys, the app and the browsers do not fit in one viewport.
    await shootEachWidth(page, out, 'security', true);

    // His next sign-in, in a browser of no passkey: the password, then the second step.
    const next = await open();
    await signIn(next, service, bob);
    await next.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    await shootEachWidth(next, out, 'second-factor');
  } finally {
    for (const context of contexts) await context.close();
  }
}

/** One pass through the pages at one viewport, in a fresh browser context (signed out). */
async function walk(browser: Browser, service: LocalService, app: ExampleApp, out: string, viewport: { width: number; height: number }) {
  const context = await browser.newContext({ ...CONTEXT_OPTIONS, viewport });
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
  await walkSecurity(browser, service, out);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const stop of stops.reverse()) await stop().catch((error: unknown) => console.error(error));
}
process.exit(failed ? 1 : 0);
