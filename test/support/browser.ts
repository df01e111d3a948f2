import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import { expect } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '#local/chromium';

export { CHROMIUM_ARGS, CHROMIUM_PATH };

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Closes Chromium (every process of it) and deletes its profile; await it in afterAll. */
  close(): Promise<void>;
}

/** Chromium with a fresh, throw-away profile: no cookies or cache from any earlier run. */
export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'dus-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1000, height: 700 },
      locale: 'en-GB',
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      try {
        await context.close();
        await reapProcesses(userDataDir);
      } finally {
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The page's WCAG 2.0 and 2.1 A and AA violations found by axe-core, as `rule: target` lines (empty
 * when none), including `label-content-name-mismatch` (WCAG 2.5.3), which axe counts as experimental
 * and leaves out unless asked. The script is evaluated through the DevTools protocol, so the page's
 * CSP does not block it.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const options = { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'], rules: { 'label-content-name-mismatch': { enabled: true } } };
  const result = (await page.evaluate(`axe.run(document, ${JSON.stringify(options)})`)) as axe.AxeResults;
  return result.violations.flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(' ')}`));
}

/** The two widths every page is checked at: a phone's, and a desktop's. */
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

/**
 * At 390 px and 1280 px: no horizontal scroll, and no WCAG 2 A/AA violation found by axe. Soft: one
 * run reports every page that fails, not only the first. Leaves the page at the desktop's size.
 */
export async function checkLayout(page: Page, label: string): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    const { scrollWidth, innerWidth } = (await page.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
    expect.soft(scrollWidth, `${label} at ${viewport.width} px scrolls sideways`).toBeLessThanOrEqual(innerWidth);
    expect.soft(await accessibilityViolations(page), `${label} at ${viewport.width} px`).toEqual([]);
  }
}

/**
 * Closing the browser ends its helper processes too, a moment later; waits for that, and kills
 * (by pid) any that stay. Every helper carries this run's unique profile folder on its command line.
 */
async function reapProcesses(userDataDir: string, timeoutMs = 5_000): Promise<void> {
  if (!existsSync('/proc')) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesWith(userDataDir);
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // ended meanwhile
        }
      }
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function processesWith(marker: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) ? [Number(pid)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}
