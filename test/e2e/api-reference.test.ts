import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#functions/registry';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { useTestService } from '../support/service';

/** The resource API's operations, as the reference must show them (the /api aliases too). */
const OPERATIONS = ROUTES.filter((r) => r.api === 'resource' && r.scopes).map((r) => ({
  id: `${r.fn}${r.path.startsWith('/api/') ? '-api' : ''}`, method: r.method, path: r.path,
}));

interface Violation { directive: string; blocked: string; source: string }

describe('the API reference at {base_url}/docs', { timeout: 60_000 }, () => {
  const service = useTestService();
  let browser: TestBrowser;
  let page: Page;
  const consoleErrors: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
    page.on('request', (request) => requests.push(request.url()));
    // Runs through the DevTools protocol before the page's own scripts, so the page's CSP does not block it.
    await page.addInitScript(`window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        window.cspViolations.push({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile });
      });`);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('renders every operation of the resource API from /openapi.json, with no console error, CSP violation or foreign request', async () => {
    await page.goto(`${service.apiUrl}/docs`);
    for (const op of OPERATIONS) {
      const section = page.locator(`[data-section-id="operation/${op.id}"]`);
      await section.waitFor();
      // The endpoint line of the operation: its method and its path, as in the route table.
      await expect.poll(() => section.innerText()).toContain(op.path);
      expect((await section.innerText()).toUpperCase()).toContain(op.method);
    }
    expect(OPERATIONS.map((op) => `${op.method} ${op.path}`)).toEqual(expect.arrayContaining(
      ['GET /user', 'GET /devices', 'GET /devices/{device_id}', 'PUT /devices/{device_id}'],
    ));
    const violations = (await page.evaluate('window.cspViolations')) as Violation[];
    expect(violations).toEqual([]);
    expect(consoleErrors).toEqual([]);
    const foreign = requests.filter((url) => !/^(data:|https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/)/.test(url));
    expect(foreign).toEqual([]);
    // Only our page, its script and the OpenAPI document (data: URLs aside).
    const ours = requests.filter((url) => !url.startsWith('data:')).map((url) => new URL(url).pathname);
    expect(new Set(ours)).toEqual(new Set(['/docs', '/docs/reference.js', '/openapi.json']));
    // The inline logo that replaced the renderer's CDN image is shown (the renderer hides it when it fails to load).
    await page.locator('img[alt="redocly logo"]').waitFor();
  });

  it('serves the page under a CSP that allows the one renderer script by its hash, and the script from its own URL', async () => {
    const pageResponse = await fetch(`${service.apiUrl}/docs`);
    expect(pageResponse.status).toBe(200);
    expect(pageResponse.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = pageResponse.headers.get('content-security-policy')!;
    const html = await pageResponse.text();
    const [, src, integrity] = /<script src="([^"]+)" integrity="([^"]+)"><\/script>/.exec(html)!;
    expect(src).toMatch(/^docs\/reference\.js\?v=[0-9a-f]{16}$/);

    const scriptResponse = await fetch(new URL(src!, `${service.apiUrl}/docs`));
    expect(scriptResponse.status).toBe(200);
    expect(scriptResponse.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(scriptResponse.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(scriptResponse.headers.get('x-content-type-options')).toBe('nosniff');
    const script = await scriptResponse.text();
    const digest = createHash('sha384').update(script).digest('base64');
    expect(integrity).toBe(`sha384-${digest}`);
    expect(csp.split('; ')).toEqual([
      "default-src 'none'", `script-src 'sha384-${digest}'`, "style-src 'unsafe-inline'", "connect-src 'self'",
      'img-src data:', "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ]);
    expect(csp).not.toContain('unsafe-eval');
    expect(script.includes('https://cdn.redoc.ly/'), 'the script names a CDN').toBe(false);

    // Another version (a page cached before a deployment) is not cached for long.
    const other = await fetch(`${service.apiUrl}/docs/reference.js?v=0000000000000000`);
    expect(other.headers.get('cache-control')).toBe('public, max-age=300');
  });
});
